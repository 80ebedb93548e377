// The official A2A JavaScript SDK client (@a2a-js/sdk, protocol v0.3)
// against maestro's A2A agent, the way another agent would use it: the
// Agent Card from /.well-known/agent-card.json (open), then JSON-RPC at the
// card's url with a bearer token.
//
//   node sdk_client.mjs BASE_URL TOKEN PUSH_URL
//
// Runs the scenarios in order and prints one JSON object per line:
//   card        the card's name, url, capabilities and skill ids
//   send        message/send (blocking) of a new task → its final Task
//   get         tasks/get of that task (historyLength 1)
//   stream      message/stream of a new task: each event's kind/state/final
//   asked       message/send whose agent asks back → input-required
//   answered    message/send with the taskId: the answer resumes the task
//   waiting     a task asking a question, then tasks/cancel → canceled,
//   cancel      and a second cancel → TaskNotCancelable
//   missing     tasks/get of an unknown task → TaskNotFound
//   resubscribe tasks/resubscribe of the finished first task
//   push        pushNotificationConfig set/get/list/delete on the first task, with
//               the count of notifications PUSH_URL (GET) says it received
// On failure {"event":"error",message} and exit code 1.
// Used by tests/integration/api_engine/a2a_server_test.cc.
import { randomUUID } from "node:crypto";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  TaskNotCancelableError,
  TaskNotFoundError,
} from "@a2a-js/sdk/client";

const [base, token, pushUrl] = process.argv.slice(2);
if (!base || !token || !pushUrl) {
  console.error("usage: node sdk_client.mjs BASE_URL TOKEN PUSH_URL");
  process.exit(2);
}

const print = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

const authFetch = (url, init = {}) =>
  fetch(url, { ...init, headers: { ...(init.headers ?? {}), Authorization: `Bearer ${token}` } });

const message = (text, extra = {}) => ({
  kind: "message",
  messageId: randomUUID(),
  role: "user",
  parts: [{ kind: "text", text }],
  ...extra,
});

const summary = (task) => ({
  kind: task.kind,
  id: task.id,
  contextId: task.contextId,
  state: task.status?.state ?? null,
  statusText: task.status?.message?.parts?.[0]?.text ?? null,
  artifact: task.artifacts?.[0]?.parts?.[0]?.text ?? null,
  history: task.history?.length ?? null,
});

const eventSummary = (ev) => ({
  kind: ev.kind,
  state: ev.kind === "task" || ev.kind === "status-update" ? ev.status?.state : null,
  final: ev.final ?? null,
  text: ev.artifact?.parts?.[0]?.text ?? null,
  artifactId: ev.artifact?.artifactId ?? null,
  append: ev.append ?? null,
});

async function errorOf(promise) {
  try {
    await promise;
    return { error: null };
  } catch (e) {
    return {
      error: e?.constructor?.name ?? "Error",
      notCancelable: e instanceof TaskNotCancelableError,
      notFound: e instanceof TaskNotFoundError,
      message: String(e?.message ?? e),
    };
  }
}

async function main() {
  // The card is open: fetched without the token.
  const card = await new DefaultAgentCardResolver().resolve(base);
  print({
    event: "card",
    name: card.name,
    url: card.url,
    protocolVersion: card.protocolVersion,
    capabilities: card.capabilities,
    skills: card.skills.map((s) => s.id),
  });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
    }),
  );
  const client = await factory.createFromUrl(base);

  const sent = await client.sendMessage({ message: message("A2A-SEND write a haiku") });
  print({ event: "send", ...summary(sent) });
  print({ event: "get", ...summary(await client.getTask({ id: sent.id, historyLength: 1 })) });

  const events = [];
  for await (const ev of client.sendMessageStream({ message: message("A2A-STREAM count to 3") })) {
    events.push(eventSummary(ev));
  }
  print({ event: "stream", events });

  const asked = await client.sendMessage({ message: message("A2A-ASK paint the fence") });
  print({ event: "asked", ...summary(asked) });
  const answered = await client.sendMessage({
    message: message("BLUE", { taskId: asked.id, contextId: asked.contextId }),
  });
  print({ event: "answered", ...summary(answered) });

  const waiting = await client.sendMessage({ message: message("A2A-CANCEL wait for me") });
  print({ event: "waiting", ...summary(waiting) });
  print({ event: "cancel", ...summary(await client.cancelTask({ id: waiting.id })) });
  print({ event: "cancel-again", ...(await errorOf(client.cancelTask({ id: waiting.id }))) });
  print({
    event: "missing",
    ...(await errorOf(client.getTask({ id: "00000000-0000-4000-8000-000000000000" }))),
  });

  const again = [];
  for await (const ev of client.resubscribeTask({ id: sent.id })) again.push(eventSummary(ev));
  print({ event: "resubscribe", events: again });

  const set = await client.setTaskPushNotificationConfig({
    taskId: sent.id,
    pushNotificationConfig: { id: "p1", url: pushUrl, token: "PUSH-TOKEN" },
  });
  const got = await client.getTaskPushNotificationConfig({ id: sent.id });
  const listed = await client.listTaskPushNotificationConfig({ id: sent.id });
  // The test's receiver answers a GET with how many notifications it got:
  // the current status goes out at once, before the config is deleted.
  let received = 0;
  for (let i = 0; i < 100 && received === 0; i++) {
    received = (await (await fetch(pushUrl)).json()).count;
    if (received === 0) await new Promise((r) => setTimeout(r, 100));
  }
  await client.deleteTaskPushNotificationConfig({ id: sent.id, pushNotificationConfigId: "p1" });
  const after = await client.listTaskPushNotificationConfig({ id: sent.id });
  print({
    event: "push",
    set: set.pushNotificationConfig,
    got: got.pushNotificationConfig?.id ?? null,
    listed: listed.length,
    received,
    afterDelete: after.length,
  });
}

main().catch((err) => {
  print({ event: "error", message: String(err?.stack ?? err?.message ?? err) });
  process.exit(1);
});
