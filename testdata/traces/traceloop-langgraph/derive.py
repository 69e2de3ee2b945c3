"""Derive Traceloop-shaped LangGraph traces from the real OpenInference ones.

Run from this folder: python3 derive.py. Each span of
../langgraph-openinference/<file> becomes the span Traceloop's LangChain JS
instrumentation makes for the same LangChain callback (same trace and span
IDs, parents, times, status and events); see README.md for the mapping.
"""
import json

SOURCE = "../langgraph-openinference/"
FILES = ["strong-explicit-handback.json", "strong-auto-handback.json", "weak-self-handoff.json"]


def attr(key, value):
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def convert(span):
    a = {x["key"]: next(iter(x["value"].values())) for x in span["attributes"]}
    kind = a.get("openinference.span.kind")
    name = span["name"]
    out = []
    if kind == "TOOL":
        # handleToolStart: the tool's class name, not the tool's own name.
        span["name"] = "execute_tool DynamicStructuredTool"
        out += [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.provider.name", "langchain"),
                attr("traceloop.span.kind", "task"), attr("traceloop.entity.name", "DynamicStructuredTool"),
                attr("traceloop.entity.input", json.dumps({"args": [a["input.value"]]}, separators=(",", ":")))]
        if "output.value" in a:
            # OpenInference wraps the tool's result as {"output": ...};
            # Traceloop writes JSON.stringify(result) itself.
            result = json.loads(a["output.value"])["output"]
            out.append(attr("traceloop.entity.output", json.dumps(result, separators=(",", ":"), ensure_ascii=False)))
    elif kind == "LLM":
        model = a.get("llm.model_name", "unknown")
        span["name"] = "chat " + model
        span["kind"] = 3  # CLIENT
        out += [attr("gen_ai.provider.name", "langchain"), attr("gen_ai.operation.name", "chat"),
                attr("gen_ai.request.model", model), attr("gen_ai.response.model", model)]
        for src, dst in [("llm.token_count.prompt", "gen_ai.usage.input_tokens"),
                         ("llm.token_count.completion", "gen_ai.usage.output_tokens"),
                         ("llm.token_count.total", "llm.usage.total_tokens")]:
            if src in a:
                out.append(attr(dst, int(a[src])))
    else:
        # handleChainStart: invoke_agent when the name holds "agent" or
        # "executor", else workflow.
        agent = "agent" in name.lower() or "executor" in name.lower()
        op = "invoke_agent" if agent else "workflow"
        span["name"] = op + " " + name
        out += [attr("gen_ai.operation.name", op), attr("gen_ai.provider.name", "langchain"),
                attr("traceloop.span.kind", "workflow"), attr("traceloop.workflow.name", name)]
        if agent:
            out.append(attr("gen_ai.agent.name", name))
    # The Traceloop SDK's association properties reach every span.
    out.append(attr("traceloop.association.properties.session_id", a["session.id"]))
    span["attributes"] = out
    return span


for f in FILES:
    d = json.load(open(SOURCE + f))
    for rs in d["resourceSpans"]:
        rs["resource"]["attributes"] = [attr("service.name", "weather-team-langgraph-traceloop")]
        for ss in rs["scopeSpans"]:
            ss["scope"] = {"name": "@traceloop/instrumentation-langchain"}
            ss["spans"] = [convert(s) for s in ss["spans"]]
    with open(f, "w") as w:
        json.dump(d, w, separators=(",", ":"), ensure_ascii=False)
        w.write("\n")
