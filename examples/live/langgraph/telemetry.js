// OpenTelemetry for the LangGraph team: OpenInference's LangChain
// instrumentation (the LangChain callback manager, instrumented by hand as an
// ES module must be) on a tracer provider with two span processors, each a
// BatchSpanProcessor (OTEL_BSP_SCHEDULE_DELAY and the other OTEL_BSP_*
// variables apply to both):
//   - the collector's: OTLP/HTTP (JSON), each export's outcome and the moment
//     the collector answered written to exports.jsonl, with its spans' IDs;
//   - the file's: the same spans as OTLP/JSON, one ExportTraceServiceRequest
//     a line, in export order, for `agentguard check`.
// Both queue spans in the order they end, so both see the same spans in the
// same order. A third processor counts the spans that ended, so that a span
// neither exported is noticed. As examples/live/app/telemetry.js does for ADK.
import fs from 'node:fs';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import { DiagConsoleLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

export const SERVICE_NAME = 'weather-agents-langgraph-openinference';

/** OtlpJsonFileExporter writes each batch as one OTLP/JSON request line. */
class OtlpJsonFileExporter {
  constructor(path) {
    this.fd = fs.openSync(path, 'w');
    this.written = 0;
  }

  export(spans, done) {
    try {
      fs.writeSync(this.fd, JsonTraceSerializer.serializeRequest(spans));
      fs.writeSync(this.fd, '\n');
      this.written += spans.length;
      done({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error });
    }
  }

  forceFlush() {
    return Promise.resolve();
  }

  shutdown() {
    fs.closeSync(this.fd);
    return Promise.resolve();
  }
}

/**
 * TimedExporter passes each batch to the OTLP exporter and logs, once the
 * collector has answered, when, how it went, and which spans were in it.
 */
class TimedExporter {
  constructor(inner, path) {
    this.inner = inner;
    this.fd = fs.openSync(path, 'w');
    this.failures = 0;
    this.answered = 0; // spans of the exports the collector answered, either way
  }

  export(spans, done) {
    this.inner.export(spans, (result) => {
      const ok = result.code === ExportResultCode.SUCCESS;
      if (!ok) this.failures++;
      this.answered += spans.length;
      const line = {
        at_ms: performance.timeOrigin + performance.now(),
        ok,
        error: ok ? undefined : String(result.error),
        spans: spans.map((s) => [s.spanContext().traceId, s.spanContext().spanId]),
      };
      fs.writeSync(this.fd, JSON.stringify(line) + '\n');
      done(result);
    });
  }

  forceFlush() {
    return this.inner.forceFlush();
  }

  async shutdown() {
    await this.inner.shutdown();
    fs.closeSync(this.fd);
  }
}

/** EndCounter is a span processor that counts the spans that ended. */
class EndCounter {
  constructor() {
    this.ended = 0;
  }

  onStart() {}

  onEnd() {
    this.ended++;
  }

  forceFlush() {
    return Promise.resolve();
  }

  shutdown() {
    return Promise.resolve();
  }
}

/**
 * startTracing instruments LangChain on a provider with the two processors
 * (after the spanProcessors given, such as the guard's GuardSpans) and
 * returns {flush, shutdown}: flush sends every span that ended (the guard's
 * first step); shutdown(idleMs) waits until both processors have exported
 * every span that ended, shuts the provider down, and resolves to what went
 * wrong: exports the collector refused, spans never exported.
 *
 * The wait lets the processors' own timers send everything: a flush at
 * shutdown sends what is queued in concurrent batches (the collector could
 * take them in another order than the file has them). Spans a full queue
 * dropped are never exported: the wait ends when nothing was exported for
 * `idleMs`.
 */
export function startTracing({ endpoint, spansFile, exportsFile, spanProcessors = [] }) {
  // LangChain runs callbacks, and so OpenInference ends spans, in the
  // background unless told otherwise: a tool span could then end after the
  // guard's flush (or after the next node started), and the collector be
  // asked about a call it has not seen.
  process.env.LANGCHAIN_CALLBACKS_BACKGROUND = 'false';
  const collector = new TimedExporter(new OTLPTraceExporter({ url: endpoint }), exportsFile);
  const file = new OtlpJsonFileExporter(spansFile);
  const counter = new EndCounter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': SERVICE_NAME }),
    spanProcessors: [...spanProcessors, counter, new BatchSpanProcessor(collector), new BatchSpanProcessor(file)],
  });
  new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(CallbackManagerModule);
  // The SDK's own warnings on stderr. A batch processor whose queue is full
  // drops spans and warns only when a later span comes: a drop at the end of
  // a burst is silent, and only the counts below tell.
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);
  const shutdown = async (idleMs) => {
    const done = () => collector.answered + file.written;
    for (let last = done(), since = performance.now(); done() < 2 * counter.ended; ) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (done() !== last) {
        [last, since] = [done(), performance.now()];
      } else if (performance.now() - since > idleMs) {
        break;
      }
    }
    const problems = [];
    if (collector.failures > 0) problems.push(`the collector refused ${collector.failures} exports (exports.jsonl)`);
    for (const [what, n] of [['the collector', collector.answered], ['the file', file.written]]) {
      if (n < counter.ended) {
        problems.push(`${counter.ended - n} of the ${counter.ended} spans that ended were never exported to ${what} (a full queue drops them: OTEL_BSP_MAX_QUEUE_SIZE)`);
      }
    }
    await provider.shutdown();
    return problems;
  };
  return { flush: () => provider.forceFlush(), shutdown };
}
