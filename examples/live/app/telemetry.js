// ADK's own OpenTelemetry setup (maybeSetOtelProviders: its resource, its
// NodeTracerProvider made global) with the span processors of
// ../shared/telemetry.js: the collector's over OTLP/HTTP (exports.jsonl),
// the OTLP/JSON file's (spans.jsonl) and the count of the spans that ended.
import { maybeSetOtelProviders } from '@google/adk';
import * as api from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { exportPipeline, logSdkWarnings } from '../shared/telemetry.js';

/**
 * startTracing sets ADK's tracer provider up with the pipeline's processors
 * (after the spanProcessors given, such as the guard's GuardSpans) and
 * returns shutdown(idleMs): it drains the pipeline, shuts the provider down,
 * and resolves to what went wrong (exports the collector refused, spans
 * never exported).
 */
export function startTracing({ endpoint, spansFile, exportsFile, spanProcessors = [] }) {
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
    // ADK would add an exporter of its own: the same spans twice.
    throw new Error('unset OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the collector is --endpoint');
  }
  const otel = { ExportResultCode, OTLPTraceExporter, JsonTraceSerializer, BatchSpanProcessor };
  const pipeline = exportPipeline(otel, { endpoint, spansFile, exportsFile });
  maybeSetOtelProviders([{ spanProcessors: [...spanProcessors, ...pipeline.processors] }]);
  // Set after ADK's setup, which registers its provider twice: the second
  // time is refused, harmlessly, and would be logged.
  logSdkWarnings(api);
  return async (idleMs) => {
    const problems = await pipeline.drain(idleMs);
    await api.trace.getTracerProvider().getDelegate().shutdown();
    return problems;
  };
}
