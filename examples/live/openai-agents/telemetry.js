// The OpenAI Agents SDK's traces as OpenTelemetry spans: the SDK's own
// tracing (a trace a run, spans for agents, model calls, tools, hand-offs)
// goes through OpenInference's TracingProcessor, which turns each SDK span
// into an OTel span on our tracer provider (it replaces the SDK's default
// processor, which would send the traces to OpenAI). The provider has two
// span processors, each a BatchSpanProcessor (OTEL_BSP_SCHEDULE_DELAY and
// the other OTEL_BSP_* variables apply to both):
//   - the collector's: OTLP/HTTP (JSON), each export's outcome and the moment
//     the collector answered written to exports.jsonl, with its spans' IDs;
//   - the file's: the same spans as OTLP/JSON, one ExportTraceServiceRequest
//     a line, in export order, for `agentguard check`.
// Both queue spans in the order they end, so both see the same spans in the
// same order. A third processor counts the spans that ended, so that a span
// neither exported is noticed.
//
// OpenInference copies the session ID of the active OTel context
// (setSession) onto every span: that needs a context manager that follows
// async calls (AsyncLocalStorage), which a bare provider does not register.
import fs from 'node:fs';
import { setTraceProcessors } from '@openai/agents';
import { OpenInferenceTracingProcessor } from '@arizeai/openinference-instrumentation-openai-agents';
import { DiagConsoleLogger, DiagLogLevel, context, diag, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

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
 * startTracing makes the tracer provider with the two processors (after the
 * spanProcessors given, such as the guard's GuardSpans), makes it the global
 * one, and registers OpenInference's processor with the SDK, passed through
 * wrapProcessor (the guard's GuardSpans.wrap, which learns which OTel span
 * each SDK span became). It returns a function that waits until both
 * exporters have every span that ended, shuts the provider down, and
 * resolves to what went wrong: exports the collector refused, spans never
 * exported.
 *
 * The wait lets the processors' own timers send everything: a flush at
 * shutdown sends what is queued in concurrent batches (the collector could
 * take them in another order than the file has them). Spans a full queue
 * dropped are never exported: the wait ends when nothing was exported for
 * `idleMs`.
 */
export function startTracing({ endpoint, spansFile, exportsFile, spanProcessors = [], wrapProcessor = (p) => p }) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const collector = new TimedExporter(new OTLPTraceExporter({ url: endpoint }), exportsFile);
  const file = new OtlpJsonFileExporter(spansFile);
  const counter = new EndCounter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'weather_agents' }),
    spanProcessors: [...spanProcessors, counter, new BatchSpanProcessor(collector), new BatchSpanProcessor(file)],
  });
  trace.setGlobalTracerProvider(provider);
  // What OpenAIAgentsInstrumentation.manuallyInstrument(agents) does, with
  // the processor in our hands to wrap.
  setTraceProcessors([wrapProcessor(new OpenInferenceTracingProcessor({ tracerProvider: provider }))]);
  // The SDK's own warnings on stderr. A batch processor whose queue is full
  // drops spans and warns only when a later span comes: a drop at the end of
  // a burst is silent, and only the counts below tell.
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);
  return async (idleMs) => {
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
}
