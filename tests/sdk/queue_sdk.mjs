// The official Dify Node SDK (npm `dify-client`, used unchanged) against two
// `sluice serve --workers 0` on one PostgreSQL database, whose runs execute
// in `sluice worker` processes.  tests/cli/queue_pg.sh starts them and runs
// this:
//
//   node tests/sdk/queue_sdk.mjs URL_A URL_B WF_KEY CHAT_KEY
//
// URL_A and URL_B are the servers' /v1 bases (http://127.0.0.1:PORT/v1).
// The apps (queue_pg.sh writes them):
//   WF_KEY    workflow: start {n: number, who: text} → if-else n > 10 →
//             "big N!" / "small N" → aggregator → end {result, who}
//   CHAT_KEY  advanced-chat: one answer node 'You said: {{#sys.query#}}'
//
// Prints one line per check, "ok NAME" or "not ok NAME -- DETAIL", then
// "# N passed, N failed"; exits 1 when a check failed.
import { ChatClient, CompletionClient } from "dify-client";

const [urlA, urlB, wfKey, chatKey] = process.argv.slice(2);
if (!urlA || !urlB || !wfKey || !chatKey) {
  console.error("usage: node queue_sdk.mjs URL_A URL_B WF_KEY CHAT_KEY");
  process.exit(2);
}
const user = "sdk-queue";
let passed = 0;
let failed = 0;

function line(s) {
  return String(s).replace(/\s+/g, " ").slice(0, 400);
}

// check(name, fn): fn throws (or rejects) to fail; an axios error shows
// its HTTP status and body.
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok ${name}`);
  } catch (e) {
    failed++;
    let detail = e && e.message ? e.message : String(e);
    if (e && e.response)
      detail += ` (HTTP ${e.response.status}: ${line(JSON.stringify(e.response.data ?? ""))})`;
    console.log(`not ok ${name} -- ${line(detail)}`);
  }
}

function expect(cond, what) {
  if (!cond) throw new Error(what);
}

function eq(actual, expected, what) {
  const a = JSON.stringify(actual);
  const b = JSON.stringify(expected);
  if (a !== b) throw new Error(`${what}: expected ${b}, got ${a}`);
}

// Reads an SSE body (a Node stream, as the SDK returns it) into the list of
// `data: {json}` events, and whether anything but "event: ping" blocks and
// data lines came.
function readEvents(stream, timeoutMs = 20000) {
  return new Promise((resolve, reject) => {
    const events = [];
    let buf = "";
    const timer = setTimeout(() => {
      stream.destroy();
      reject(new Error(`the stream did not end within ${timeoutMs} ms (${events.length} events)`));
    }, timeoutMs);
    stream.on("data", (chunk) => {
      buf += chunk.toString("utf8");
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (block === "event: ping") continue;
        if (!block.startsWith("data: ") || block.includes("\n")) {
          clearTimeout(timer);
          reject(new Error(`not one data line: ${line(block)}`));
          return;
        }
        try {
          events.push(JSON.parse(block.slice(6)));
        } catch (e) {
          clearTimeout(timer);
          reject(new Error(`not JSON: ${line(block)}`));
          return;
        }
      }
    });
    stream.on("end", () => {
      clearTimeout(timer);
      if (buf.trim()) reject(new Error(`left after the last event: ${line(buf)}`));
      else resolve(events);
    });
    stream.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

const servers = [
  ["A", urlA],
  ["B", urlB],
];

for (const [name, url] of servers) {
  const wf = new CompletionClient(wfKey, url);
  await check(`${name}: runWorkflow blocking, run by a worker: status and exact outputs`, async () => {
    const r = await wf.runWorkflow({ n: 42, who: `sdk${name}` }, user, false);
    eq(r.status, 200, "HTTP status");
    const d = r.data;
    expect(d.workflow_run_id && d.task_id, "workflow_run_id and task_id");
    eq(d.data.id, d.workflow_run_id, "data.id");
    eq(d.data.status, "succeeded", "status");
    eq(d.data.outputs, { result: "big 42!", who: `sdk${name}` }, "outputs");
  });

  await check(`${name}: runWorkflow streaming from the store: started, nodes, finished`, async () => {
    const r = await wf.runWorkflow({ n: 3, who: `sdk${name}` }, user, true);
    eq(r.status, 200, "HTTP status");
    expect(/text\/event-stream/.test(r.headers["content-type"]), "Content-Type text/event-stream");
    const evs = await readEvents(r.data);
    const names = evs.map((e) => e.event);
    eq(names[0], "workflow_started", "first event");
    eq(names[names.length - 1], "workflow_finished", "last event");
    const started = evs.filter((e) => e.event === "node_started").map((e) => e.data.node_id);
    const finished = evs.filter((e) => e.event === "node_finished").map((e) => e.data.node_id);
    eq(started, ["start", "ifelse", "small1", "agg", "end"], "nodes started");
    eq(finished, started, "nodes finished");
    const runId = evs[0].workflow_run_id;
    const taskId = evs[0].task_id;
    expect(runId && taskId, "workflow_run_id and task_id");
    expect(
      evs.every((e) => e.workflow_run_id === runId && e.task_id === taskId),
      "one run id and one task id on every event",
    );
    const fin = evs[evs.length - 1].data;
    eq(fin.id, runId, "workflow_finished data.id");
    eq(fin.status, "succeeded", "status");
    eq(fin.outputs, { result: "small 3", who: `sdk${name}` }, "outputs");
  });
}

// a conversation started through one server goes on through the other,
// both ways, blocking then streaming
for (const [first, second] of [
  [servers[0], servers[1]],
  [servers[1], servers[0]],
]) {
  const c1 = new ChatClient(chatKey, first[1]);
  const c2 = new ChatClient(chatKey, second[1]);
  const tag = `${first[0]}→${second[0]}`;
  let conversation = null;
  await check(`${tag}: createChatMessage blocking through ${first[0]}: answer and ids`, async () => {
    const r = await c1.createChatMessage({}, `hello ${tag}`, user, false);
    eq(r.status, 200, "HTTP status");
    eq(r.data.answer, `You said: hello ${tag}`, "answer");
    expect(r.data.conversation_id && r.data.message_id, "conversation_id and message_id");
    conversation = r.data.conversation_id;
  });

  await check(`${tag}: createChatMessage streaming through ${second[0]}, same conversation`, async () => {
    expect(conversation, "no conversation from the blocking message");
    const r = await c2.createChatMessage({}, `again ${tag}`, user, true, conversation);
    eq(r.status, 200, "HTTP status");
    const evs = await readEvents(r.data);
    const names = evs.map((e) => e.event);
    const answer = evs.filter((e) => e.event === "message").map((e) => e.answer).join("");
    eq(answer, `You said: again ${tag}`, "the message events' answer");
    eq(names[names.length - 1], "message_end", "last event");
    expect(names.indexOf("message") < names.indexOf("message_end"), "message before message_end");
    expect(evs.every((e) => e.conversation_id === conversation), "conversation_id on every event");
  });

  await check(`${tag}: getConversationMessages through ${first[0]} lists both turns`, async () => {
    const r = await c1.getConversationMessages(user, conversation);
    eq(
      r.data.data.map((m) => [m.query, m.answer]),
      [
        [`hello ${tag}`, `You said: hello ${tag}`],
        [`again ${tag}`, `You said: again ${tag}`],
      ],
      "messages",
    );
  });
}

console.log(`# ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
