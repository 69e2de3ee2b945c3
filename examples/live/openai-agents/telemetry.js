// The OpenAI Agents SDK's traces as OpenTelemetry spans: the SDK's own
// tracing (a trace a run, spans for agents, model calls, tools, hand-offs)
// goes through OpenInference's TracingProcessor, which turns each SDK span
// into an OTel span on our tracer provider (it replaces the SDK's default
// processor, which would send the traces to OpenAI). The provider has the
// span processors of ../shared/telemetry.js: the collector's over OTLP/HTTP
// (exports.jsonl), the OTLP/JSON file's (spans.jsonl) and the count of the
// spans that ended.
//
// OpenInference copies the session ID of the active OTel context
// (setSession) onto every span: that needs a context manager that follows
// async calls (AsyncLocalStorage), which a bare provider does not register.
import { setTraceProcessors } from '@openai/agents';
import { OpenInferenceTracingProcessor } from '@arizeai/openinference-instrumentation-openai-agents';
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { exportPipeline, logSdkWarnings } from '../shared/telemetry.js';

/**
 * startTracing makes the tracer provider with the pipeline's processors
 * (after the spanProcessors given, such as the guard's GuardSpans), makes it
 * the global one, and registers OpenInference's processor with the SDK,
 * passed through wrapProcessor (the guard's GuardSpans.wrap, which learns
 * which OTel span each SDK span became). It returns shutdown(idleMs): it
 * drains the pipeline, shuts the provider down, and resolves to what went
 * wrong (exports the collector refused, spans never exported).
 */
export function startTracing({ endpoint, spansFile, exportsFile, spanProcessors = [], wrapProcessor = (p) => p }) {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const otel = { ExportResultCode, OTLPTraceExporter, JsonTraceSerializer, BatchSpanProcessor };
  const pipeline = exportPipeline(otel, { endpoint, spansFile, exportsFile });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'weather_agents' }),
    spanProcessors: [...spanProcessors, ...pipeline.processors],
  });
  api.trace.setGlobalTracerProvider(provider);
  // What OpenAIAgentsInstrumentation.manuallyInstrument(agents) does, with
  // the processor in our hands to wrap.
  setTraceProcessors([wrapProcessor(new OpenInferenceTracingProcessor({ tracerProvider: provider }))]);
  logSdkWarnings(api);
  return async (idleMs) => {
    const problems = await pipeline.drain(idleMs);
    await provider.shutdown();
    return problems;
  };
}
