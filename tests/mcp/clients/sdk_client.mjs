// The official MCP TypeScript SDK client against maestro's /mcp, as a real
// MCP client would use it: Streamable HTTP, a bearer token, create_task with
// wait and a progress callback, then get_task and the session's DELETE.
//
//   node sdk_client.mjs URL TOKEN [INSTRUCTION]
//
// Prints one JSON object per line: {"event":"connected",protocolVersion,...},
// {"event":"tools",...}, {"event":"progress",...} per notification,
// {"event":"result",progressCount,result}, {"event":"task",...} and
// {"event":"closed"}; on failure {"event":"error",message} and exit code 1.
// Used by tests/integration/api_engine/mcp_server_test.cc.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, instruction = "MCP-SDK-MARK write a haiku"] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: node sdk_client.mjs URL TOKEN [INSTRUCTION]");
  process.exit(2);
}

const print = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "maestro-sdk-test", version: "1.0.0" });
  await client.connect(transport);
  print({
    event: "connected",
    protocolVersion: transport.protocolVersion,
    sessionId: transport.sessionId ?? null,
    server: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
  });

  const tools = await client.listTools();
  print({ event: "tools", names: tools.tools.map((t) => t.name) });

  let progressCount = 0;
  const result = await client.callTool(
    { name: "create_task", arguments: { instruction, wait: true } },
    undefined,
    {
      onprogress: (p) => {
        progressCount += 1;
        print({ event: "progress", progress: p.progress, message: p.message ?? "" });
      },
      // A task may take a while: each notification restarts the timeout.
      timeout: 60000,
      resetTimeoutOnProgress: true,
    },
  );
  print({ event: "result", progressCount, result });
  if (result.isError) throw new Error("create_task failed: " + JSON.stringify(result.content));

  const taskId = result.structuredContent?.task?.id;
  const shown = await client.callTool({ name: "get_task", arguments: { task_id: taskId } });
  print({
    event: "task",
    id: shown.structuredContent?.task?.id ?? null,
    status: shown.structuredContent?.latest_job?.status ?? null,
  });

  await transport.terminateSession();
  await client.close();
  print({ event: "closed" });
}

main().catch((err) => {
  print({ event: "error", message: String(err?.message ?? err) });
  process.exit(1);
});
