// OpenTelemetry as the household fixtures were recorded: OpenInference's
// LangChain instrumentation (the LangChain callback manager, instrumented by
// hand as an ES module must be) on a tracer provider whose resource names the
// service, with two batch span processors: OTLP/HTTP (JSON) to the collector,
// and an OTLP/JSON file, one ExportTraceServiceRequest a line, for
// `agentguard learn` and `evaluate`. A third counts the spans that ended, so
// that a span never exported is noticed.
import fs from 'node:fs';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import { DiagConsoleLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

export const SERVICE_NAME = 'household-agent-langgraph-openinference';

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

/** CountingExporter counts what the collector answered, and its refusals. */
class CountingExporter {
  constructor(inner) {
    this.inner = inner;
    this.answered = 0;
    this.failures = 0;
  }

  export(spans, done) {
    this.inner.export(spans, (result) => {
      this.answered += spans.length;
      if (result.code !== ExportResultCode.SUCCESS) this.failures++;
      done(result);
    });
  }

  forceFlush() {
    return this.inner.forceFlush();
  }

  shutdown() {
    return this.inner.shutdown();
  }
}

/**
 * EndCounter counts the spans that ended, and remembers each episode's
 * (session.id's) last one: the deny hook asks after it.
 */
class EndCounter {
  constructor() {
    this.ended = 0;
    this.last = new Map(); // session.id -> span ID
  }
  onStart() {}
  onEnd(span) {
    this.ended++;
    const session = span.attributes['session.id'];
    if (session !== undefined) this.last.set(session, span.spanContext().spanId);
  }
  forceFlush() {
    return Promise.resolve();
  }
  shutdown() {
    return Promise.resolve();
  }
}

/**
 * startTracing instruments LangChain and returns {flush, lastSpan, stop}:
 * flush sends every span that has ended (the guard hook's first step, so
 * that the collector has the last tool call before it is asked); lastSpan
 * is the ID of an episode's last span that ended; forget drops it when the
 * episode is over; stop flushes, shuts the provider down and resolves to
 * what went wrong.
 */
export function startTracing({ endpoint, spansFile, serviceName = SERVICE_NAME }) {
  // LangChain runs callbacks, and so OpenInference ends spans, in the
  // background unless told otherwise: a tool span could then end after the
  // hook's flush, and the collector be asked about a call it has not seen.
  process.env.LANGCHAIN_CALLBACKS_BACKGROUND = 'false';
  const counter = new EndCounter();
  const processors = [counter];
  let collector;
  if (endpoint) {
    collector = new CountingExporter(new OTLPTraceExporter({ url: endpoint }));
    processors.push(new BatchSpanProcessor(collector));
  }
  const file = new OtlpJsonFileExporter(spansFile);
  processors.push(new BatchSpanProcessor(file));
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: processors,
  });
  new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(CallbackManagerModule);
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);
  return {
    flush: () => provider.forceFlush(),
    lastSpan: (session) => counter.last.get(session),
    forget: (session) => counter.last.delete(session),
    stop: async () => {
      await provider.forceFlush();
      const problems = [];
      if (collector && collector.failures > 0) problems.push(`the collector refused ${collector.failures} exports`);
      for (const [what, n] of [['the collector', collector?.answered], ['the file', file.written]]) {
        if (n !== undefined && n < counter.ended) {
          problems.push(`${counter.ended - n} of the ${counter.ended} spans that ended were never exported to ${what}`);
        }
      }
      await provider.shutdown();
      return problems;
    },
  };
}
