// OpenTelemetry for the LangGraph team: OpenInference's LangChain
// instrumentation (the LangChain callback manager, instrumented by hand as an
// ES module must be) on a tracer provider with the span processors of
// ../shared/telemetry.js: the collector's over OTLP/HTTP (exports.jsonl),
// the OTLP/JSON file's (spans.jsonl) and the count of the spans that ended.
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as api from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { exportPipeline, logSdkWarnings } from '../shared/telemetry.js';

export const SERVICE_NAME = 'weather-agents-langgraph-openinference';

/**
 * startTracing instruments LangChain on a provider with the pipeline's
 * processors (after the spanProcessors given, such as the guard's
 * GuardSpans) and returns {flush, shutdown}: flush sends every span that
 * ended (the guard's first step); shutdown(idleMs) drains the pipeline,
 * shuts the provider down, and resolves to what went wrong (exports the
 * collector refused, spans never exported).
 */
export function startTracing({ endpoint, spansFile, exportsFile, spanProcessors = [] }) {
  // LangChain runs callbacks, and so OpenInference ends spans, in the
  // background unless told otherwise: a tool span could then end after the
  // guard's flush (or after the next node started), and the collector be
  // asked about a call it has not seen.
  process.env.LANGCHAIN_CALLBACKS_BACKGROUND = 'false';
  const otel = { ExportResultCode, OTLPTraceExporter, JsonTraceSerializer, BatchSpanProcessor };
  const pipeline = exportPipeline(otel, { endpoint, spansFile, exportsFile });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': SERVICE_NAME }),
    spanProcessors: [...spanProcessors, ...pipeline.processors],
  });
  new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(CallbackManagerModule);
  logSdkWarnings(api);
  const shutdown = async (idleMs) => {
    const problems = await pipeline.drain(idleMs);
    await provider.shutdown();
    return problems;
  };
  return { flush: () => provider.forceFlush(), shutdown };
}
