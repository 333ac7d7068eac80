"""A stdio MCP server with no tools that leaves a process behind outside its own process group:
at start it double-forks a `setsid` loop that has dropped the daemon's owner variable and keeps
appending to a file (argv[1]), and writes that loop's pid to argv[2]. Used by the containment
test: after `synapse daemon stop` the loop must be gone. Speaks just enough JSON-RPC (newline
delimited) for the daemon's client to connect and list tools."""

import json
import os
import subprocess
import sys

grow, pidfile = sys.argv[1], sys.argv[2]
env = {k: v for k, v in os.environ.items() if not k.startswith("SYNAPSE_")}
loop = f"while :; do echo x >> '{grow}'; sleep 0.05; done"
subprocess.Popen(
    ["setsid", "sh", "-c", f"sh -c \"echo \\$\\$ > '{pidfile}'; {loop}\" & exit 0"],
    env=env,
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
).wait()


def reply(message_id, result=None, error=None):
    body = {"jsonrpc": "2.0", "id": message_id}
    if error is None:
        body["result"] = result
    else:
        body["error"] = error
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        version = message.get("params", {}).get("protocolVersion", "2025-06-18")
        reply(
            message["id"],
            {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "leaky", "version": "1.0"},
            },
        )
    elif method == "tools/list":
        reply(message["id"], {"tools": []})
    elif method == "ping":
        reply(message["id"], {})
    else:
        reply(message["id"], error={"code": -32601, "message": "method not found"})
