"""A hand-written stdio JSON-RPC MCP server (no SDK) whose tools misbehave at the protocol level.

Tools: ok (a text result), app_error (a JSON-RPC application error, -32000), malformed (a
result whose content is not a list), hologram (a content block of an unknown type), shapeless
(a JSON-RPC result that is a string, not an object), shapeless_error (a JSON-RPC error that is a
string), freeze (the whole server stops: it never
answers or reads anything again).

An optional argument changes how it answers tools/list: ``shapeless-list`` answers with a
string result; ``slow-list`` writes "listing" to stderr and answers 2 s later, or as soon as
more input arrives (its stdin closing when the client removes it, a cancellation).
"""

import json
import select
import sys
import time

TOOLS = ["ok", "app_error", "malformed", "hologram", "shapeless", "shapeless_error", "freeze"]
MODE = sys.argv[1] if len(sys.argv) > 1 else ""


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request, value):
    send({"jsonrpc": "2.0", "id": request["id"], "result": value})


def error(request, code, message):
    send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": code, "message": message}})


def call(request):
    name = request["params"]["name"]
    if name == "ok":
        result(request, {"content": [{"type": "text", "text": "ok"}]})
    elif name == "app_error":
        error(request, -32000, "the database is locked")
    elif name == "malformed":
        result(request, {"content": "not a list"})
    elif name == "hologram":
        result(request, {"content": [{"type": "hologram", "data": "3d"}]})
    elif name == "shapeless":
        result(request, "a string where an object belongs")
    elif name == "shapeless_error":
        send({"jsonrpc": "2.0", "id": request["id"], "error": "the database is locked"})
    elif name == "freeze":
        print("rogue: freezing", file=sys.stderr, flush=True)
        while True:
            time.sleep(60)


def main():
    print("rogue server up", file=sys.stderr, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        method = request.get("method")
        if "id" not in request:
            continue  # a notification
        if method == "initialize":
            result(
                request,
                {
                    "protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "rogue", "version": "1"},
                },
            )
        elif method == "tools/list" and MODE == "shapeless-list":
            result(request, "a string where an object belongs")
        elif method == "tools/list":
            if MODE == "slow-list":
                print("listing", file=sys.stderr, flush=True)
                select.select([sys.stdin], [], [], 2)
            schema = {"type": "object", "properties": {}}
            result(request, {"tools": [{"name": n, "inputSchema": schema} for n in TOOLS]})
        elif method == "tools/call":
            call(request)
        elif method == "ping":
            result(request, {})
        else:
            error(request, -32601, f"method not found: {method}")


main()
