"""The span attributes the workbench writes and reads: the OpenTelemetry GenAI semantic conventions at the pinned
version, OpenInference's names where Phoenix reads them, and the workbench's own ``workbench.*`` facts.

One table, used by the live loop's exporter (``workbench.loop.otel_export``) and by the span importer
(``workbench.importers.otel_genai``), so a run exported and read back keeps every fact a governor decides from.
docs/importers/otel-genai.md says which attribute carries what.
"""

from __future__ import annotations

# The semantic conventions these names follow (GenAI spans, events and agent spans; the incubating attribute set
# of opentelemetry-semantic-conventions 0.66b2). The exporter stamps it on its tracer as the schema URL.
SEMCONV_VERSION = "1.44.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"

# -- GenAI semantic conventions ---------------------------------------------------------------------------------
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
SYSTEM = "gen_ai.system"  # the provider's name before gen_ai.provider.name (semconv < 1.37)
# The conventions' provider values whose genai-prices id differs (the rest are the same once lower-cased).
PROVIDER_VALUES = {
    "gcp.gemini": "google",
    "gcp.vertex_ai": "google",
    "gcp.gen_ai": "google",
    "aws.bedrock": "aws",
    "azure.ai.openai": "azure",
    "azure.ai.inference": "azure",
    "x_ai": "x-ai",
    "mistral_ai": "mistral",
}
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
OUTPUT_MESSAGES = "gen_ai.output.messages"  # opt-in content (JSON text)
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"  # opt-in content
TOOL_RESULT = "gen_ai.tool.call.result"  # opt-in content
TOOL_TYPE = "gen_ai.tool.type"

CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
INVOKE_AGENT = "invoke_agent"

# -- OpenInference (Phoenix files spans by these) ----------------------------------------------------------------
OI_KIND = "openinference.span.kind"
OI_PROJECT = "openinference.project.name"  # resource attribute: the Phoenix project the spans go to
OI_COST = "llm.cost.total"

# -- The workbench's own facts: what a governor reads that the conventions have no name for --------------------
WB = "workbench."
RUN_ID = WB + "run.id"
CONTEXT_LENGTH = WB + "run.context_length"
POLICY = WB + "run.policy"  # the recorded policy's settings, JSON
OUTCOME_STOP = WB + "outcome.stop_reason"
OUTCOME_VERDICT = WB + "outcome.verdict"
OUTCOME_EXHAUSTED = WB + "outcome.exhausted"
OUTCOME_DETAIL = WB + "outcome.detail"
OUTCOME_TEXT = WB + "outcome.text"  # content: only with capture on
TURN_INDEX = WB + "turn.index"
TURN_MUTATED = WB + "turn.mutated"
TURN_RETRIES = WB + "turn.retries"
TURN_SEGMENT = WB + "turn.segment"
TURN_TIMED = WB + "turn.timed"  # [start recorded, end recorded], sent only when one was not
TURN_ROUTE = WB + "turn.route"  # the provider path (Route), JSON
TURN_TEXT = WB + "turn.text"  # content: only with capture on
TURN_HAS_TEXT = WB + "turn.has_text"  # without content: whether the reply carried text (a final answer)
TURN_TEXT_SHA256 = WB + "turn.text.sha256"
ARGUMENTS_SHA256 = WB + "tool.arguments.sha256"
RESULT_SHA256 = WB + "tool.result.sha256"
RESULT_SIZE = WB + "tool.result.size"
RESULT_ERROR = WB + "tool.result.is_error"
RESULT_TIMED_OUT = WB + "tool.result.timed_out"
RESULT_DURATION = WB + "tool.result.duration_s"
RESULT_USAGE = WB + "tool.result.usage"  # tool-side model usage, JSON
# a trace event (a governor decision, a prune, an injection) as a span event on the run span, named by its kind
EVENT_KIND = WB + "event.kind"
EVENT_TURN = WB + "event.turn"
EVENT_REASON = WB + "event.reason"
EVENT_DATA = WB + "event.data"  # JSON

# The environment variable the conventions name for capturing message contents (off unless "true").
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

# Arguments withheld without content capture: a stand-in that keeps each call's identity (the repeat guard
# compares exact argument text) and says what it is.
WITHHELD_PREFIX = "<withheld sha256:"


def withheld_arguments(sha256: str) -> str:
    """The argument text a read-back call carries when its arguments were not captured: the digest of the
    original text, so two calls are the same call exactly when their arguments were."""
    return f"{WITHHELD_PREFIX}{sha256}>"
