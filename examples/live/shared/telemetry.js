// Where the live apps' spans go, whichever framework made them: three span
// processors for the app's tracer provider.
//   - the collector's: a BatchSpanProcessor to OTLP/HTTP (JSON), each
//     export's outcome and the moment the collector answered written to
//     exports.jsonl, with its spans' IDs (the start of the verdict delay the
//     harness measures, and the proof of what the collector took);
//   - the file's: a BatchSpanProcessor writing the same spans as OTLP/JSON,
//     one ExportTraceServiceRequest a line, in export order, for
//     `agentguard check`;
//   - a counter of the spans that ended, so that a span neither exported is
//     noticed.
// OTEL_BSP_SCHEDULE_DELAY and the other OTEL_BSP_* variables apply to both
// batch processors. Both queue spans in the order they end, so both see the
// same spans in the same order; the harness checks that from the two files.
//
// The OpenTelemetry classes come from the app (its own pinned packages), so
// that this file imports nothing but node: builtins and every app can use it
// by relative path.
import fs from 'node:fs';

/**
 * exportPipeline makes the three processors. otel holds the app's
 * ExportResultCode (@opentelemetry/core), OTLPTraceExporter
 * (@opentelemetry/exporter-trace-otlp-http), JsonTraceSerializer
 * (@opentelemetry/otlp-transformer) and BatchSpanProcessor
 * (@opentelemetry/sdk-trace-base). It returns the processors to put on the
 * provider (after the app's own, such as the guard's) and drain.
 *
 * drain(idleMs) waits until both batch processors have exported every span
 * that ended and resolves to what went wrong: exports the collector refused,
 * spans never exported. Shut the provider down after it: the wait lets the
 * processors' own timers send everything, whereas a flush at shutdown sends
 * what is queued in concurrent batches (the collector could take them in
 * another order than the file has them, and past 30 the OTLP exporter
 * refuses them). Spans a full queue dropped are never exported: the wait
 * ends when nothing was exported for idleMs.
 */
export function exportPipeline(otel, { endpoint, spansFile, exportsFile }) {
  const collector = new TimedExporter(otel, new otel.OTLPTraceExporter({ url: endpoint }), exportsFile);
  const file = new OtlpJsonFileExporter(otel, spansFile);
  const counter = new EndCounter();
  const processors = [counter, new otel.BatchSpanProcessor(collector), new otel.BatchSpanProcessor(file)];
  const drain = async (idleMs) => {
    const done = () => collector.answered + file.written;
    for (let last = done(), since = performance.now(); done() < 2 * counter.ended; ) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (done() !== last) {
        [last, since] = [done(), performance.now()];
      } else if (performance.now() - since > idleMs) {
        break;
      }
    }
    return problems(collector, file, counter);
  };
  return { processors, drain };
}

/** problems are the exports the collector refused and the spans either exporter never got. */
function problems(collector, file, counter) {
  const out = [];
  if (collector.failures > 0) out.push(`the collector refused ${collector.failures} exports (exports.jsonl)`);
  for (const [what, n] of [['the collector', collector.answered], ['the file', file.written]]) {
    if (n < counter.ended) {
      out.push(`${counter.ended - n} of the ${counter.ended} spans that ended were never exported to ${what} (a full queue drops them: OTEL_BSP_MAX_QUEUE_SIZE)`);
    }
  }
  return out;
}

/**
 * logSdkWarnings puts the OpenTelemetry SDK's own warnings on stderr (api:
 * @opentelemetry/api). A batch processor whose queue is full drops spans and
 * warns only when a later span comes: a drop at the end of a burst is
 * silent, and only drain's counts tell.
 */
export function logSdkWarnings(api) {
  api.diag.setLogger(new api.DiagConsoleLogger(), api.DiagLogLevel.WARN);
}

/** OtlpJsonFileExporter writes each batch as one OTLP/JSON request line. */
class OtlpJsonFileExporter {
  constructor(otel, path) {
    this.otel = otel;
    this.fd = fs.openSync(path, 'w');
    this.written = 0;
  }

  export(spans, done) {
    const { ExportResultCode, JsonTraceSerializer } = this.otel;
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
  constructor(otel, inner, path) {
    this.otel = otel;
    this.inner = inner;
    this.fd = fs.openSync(path, 'w');
    this.failures = 0;
    this.answered = 0; // spans of the exports the collector answered, either way
  }

  export(spans, done) {
    this.inner.export(spans, (result) => {
      const ok = result.code === this.otel.ExportResultCode.SUCCESS;
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
