"""A hand-written stdio JSON-RPC MCP server (no SDK) that does what its script says, hostile too.

``hostile.py SCRIPT`` reads SCRIPT, a JSON file: ``{"tools": [...], "calls": {...}}``. ``tools``
is what ``tools/list`` answers, as given (any names, descriptions and schemas). ``calls`` maps a
tool name to a list of steps, each a JSON object run in order when the tool is called:

- ``{"send": MESSAGE}``: write MESSAGE as one line, ``"$id"`` anywhere in it (as a value)
  replaced by the call's request id; ``{"raw": TEXT}`` writes TEXT as it is (one line);
- ``{"ask": MESSAGE}``: send MESSAGE (a request to the client, id ``"srv-<n>"`` added), wait for
  the client's answer and keep it; ``{"reply_with_answer": true}`` answers the call with the
  answers kept so far as JSON text;
- ``{"result": VALUE}``: answer the call with ``"result": VALUE``;
- ``{"huge": N}``: answer the call with one text block of N characters;
- ``{"exit": CODE}``: exit at once, mid-call.

Every step happens in the server's one thread, so a call's steps are never interleaved. Each
call is written to stderr as ``called 'NAME'``.
"""

import json
import sys

SCRIPT = json.loads(open(sys.argv[1], encoding="utf-8").read())
asked = iter(range(1, 1_000_000))


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def with_id(value, request_id):
    if value == "$id":
        return request_id
    if isinstance(value, dict):
        return {k: with_id(v, request_id) for k, v in value.items()}
    if isinstance(value, list):
        return [with_id(v, request_id) for v in value]
    return value


def answer_of(request_id):
    """Read lines until the client's answer to our request ``request_id``."""
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            return message
    sys.exit(0)


def call(request):
    name = request["params"]["name"]
    print(f"called {name!r}", file=sys.stderr, flush=True)
    answers = []
    for step in SCRIPT.get("calls", {}).get(name, [{"result": {"content": []}}]):
        if "send" in step:
            send(with_id(step["send"], request["id"]))
        elif "raw" in step:
            sys.stdout.write(step["raw"] + "\n")
            sys.stdout.flush()
        elif "ask" in step:
            request_id = f"srv-{next(asked)}"
            send({"jsonrpc": "2.0", "id": request_id, **step["ask"]})
            answers.append(answer_of(request_id))
        elif "reply_with_answer" in step:
            text = json.dumps(answers)
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"content": [{"type": "text", "text": text}]},
                }
            )
        elif "result" in step:
            send({"jsonrpc": "2.0", "id": request["id"], "result": step["result"]})
        elif "huge" in step:
            block = {"type": "text", "text": "x" * step["huge"]}
            send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [block]}})
        elif "exit" in step:
            sys.exit(step["exit"])


def main():
    for line in sys.stdin:
        request = json.loads(line)
        method = request.get("method")
        if "id" not in request or "method" not in request:
            continue  # a notification, or an answer nobody waits for
        if method == "initialize":
            capabilities = {"tools": {}}
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {
                        "protocolVersion": request["params"]["protocolVersion"],
                        "capabilities": capabilities,
                        "serverInfo": {"name": "hostile", "version": "1"},
                    },
                }
            )
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": SCRIPT["tools"]}})
        elif method == "tools/call":
            call(request)
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
        else:
            error = {"code": -32601, "message": f"method not found: {method}"}
            send({"jsonrpc": "2.0", "id": request["id"], "error": error})


main()
