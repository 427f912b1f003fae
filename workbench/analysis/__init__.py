"""Calibration analysis over sweep frames: the grant band, survival of tokens-to-finish, where governors fire."""
