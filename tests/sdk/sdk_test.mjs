// The official Dify Node SDK (npm `dify-client`, used unchanged) against a
// running `sluice serve`.  tests/cli/serve.sh starts the server, imports the
// apps and runs this; by hand:
//
//   SLUICE_URL=http://127.0.0.1:5001/v1 SLUICE_WF_KEY=app-… SLUICE_CHAT_KEY=app-… \
//   SLUICE_SLOW_KEY=app-… node tests/sdk/sdk_test.mjs
//
// The apps (tests/cli/serve.sh writes them):
//   SLUICE_WF_KEY    workflow: start {n: number, who: text} → if-else n > 10 →
//                    "big N!" / "small N" → aggregator → end {result, who}
//   SLUICE_CHAT_KEY  advanced-chat: one answer node 'You said: {{#sys.query#}}'
//   SLUICE_SLOW_KEY  workflow: start {secs: number} → code time.sleep(secs) →
//                    end {slept}
//
// Prints one line per check, "ok NAME" or "not ok NAME -- DETAIL", then
// "# N passed, N failed"; exits 1 when a check failed.
import { ChatClient, CompletionClient, DifyClient } from "dify-client";

const url = process.env.SLUICE_URL;
const wfKey = process.env.SLUICE_WF_KEY;
const chatKey = process.env.SLUICE_CHAT_KEY;
const slowKey = process.env.SLUICE_SLOW_KEY;
if (!url || !wfKey || !chatKey || !slowKey) {
  console.error("needs SLUICE_URL, SLUICE_WF_KEY, SLUICE_CHAT_KEY and SLUICE_SLOW_KEY");
  process.exit(2);
}
const user = "sdk-user";
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
// `data: {json}` events; onEvent sees each one as it arrives.
function readEvents(stream, onEvent = () => {}, timeoutMs = 20000) {
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
        for (const l of block.split("\n")) {
          if (!l.startsWith("data: ")) continue; // "event: ping"
          let ev;
          try {
            ev = JSON.parse(l.slice(6));
          } catch (e) {
            clearTimeout(timer);
            reject(new Error(`not JSON: ${line(l)}`));
            return;
          }
          events.push(ev);
          try {
            onEvent(ev);
          } catch (e) {
            clearTimeout(timer);
            reject(e);
          }
        }
      }
    });
    stream.on("end", () => {
      clearTimeout(timer);
      resolve(events);
    });
    stream.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

const wf = new CompletionClient(wfKey, url);
const slow = new CompletionClient(slowKey, url);
const chat = new ChatClient(chatKey, url);

await check("getApplicationParameters lists the start variables", async () => {
  const r = await new DifyClient(wfKey, url).getApplicationParameters(user);
  eq(r.status, 200, "HTTP status");
  const vars = r.data.user_input_form.map((f) => Object.values(f)[0].variable);
  eq(vars, ["n", "who"], "user_input_form variables");
});

await check("runWorkflow blocking: status and exact outputs", async () => {
  const r = await wf.runWorkflow({ n: 42, who: "sdk" }, user, false);
  eq(r.status, 200, "HTTP status");
  const d = r.data;
  expect(d.workflow_run_id && d.task_id, "workflow_run_id and task_id");
  eq(d.data.id, d.workflow_run_id, "data.id");
  eq(d.data.status, "succeeded", "status");
  eq(d.data.outputs, { result: "big 42!", who: "sdk" }, "outputs");
});

await check("runWorkflow streaming: started, nodes, finished with the outputs", async () => {
  const r = await wf.runWorkflow({ n: 3, who: "sdk" }, user, true);
  eq(r.status, 200, "HTTP status");
  expect(/text\/event-stream/.test(r.headers["content-type"]), "Content-Type text/event-stream");
  const evs = await readEvents(r.data);
  const names = evs.map((e) => e.event);
  eq(names[0], "workflow_started", "first event");
  eq(names[names.length - 1], "workflow_finished", "last event");
  expect(names.includes("node_started") && names.includes("node_finished"), "node events");
  const runId = evs[0].workflow_run_id;
  expect(evs.every((e) => e.workflow_run_id === runId && e.task_id), "one run id and a task id on every event");
  const fin = evs[evs.length - 1].data;
  eq(fin.id, runId, "workflow_finished data.id");
  eq(fin.status, "succeeded", "status");
  eq(fin.outputs, { result: "small 3", who: "sdk" }, "outputs");
});

await check("runWorkflow with a wrong key is refused with 401", async () => {
  try {
    await new CompletionClient("app-not-a-key", url).runWorkflow({ n: 1 }, user, false);
  } catch (e) {
    expect(e.response, `no HTTP answer: ${e.message}`);
    eq(e.response.status, 401, "HTTP status");
    eq(e.response.data.code, "unauthorized", "error code");
    return;
  }
  throw new Error("the request succeeded");
});

await check("stop a streaming run (POST /workflows/tasks/:task_id/stop via sendRequest)", async () => {
  // dify-client 2.3.2 has no stop method: its own sendRequest sends it.
  const r = await slow.runWorkflow({ secs: 10 }, user, true);
  let stopped = null;
  const t0 = Date.now();
  const evs = await readEvents(r.data, (ev) => {
    if (!stopped && ev.event === "node_started" && ev.data.node_type === "code")
      stopped = slow.sendRequest("POST", `/workflows/tasks/${ev.task_id}/stop`, { user });
  });
  expect(stopped, "the code node never started");
  const s = await stopped;
  eq(s.data, { result: "success" }, "stop answer");
  const fin = evs[evs.length - 1];
  eq(fin.event, "workflow_finished", "last event");
  eq(fin.data.status, "stopped", "status");
  expect(Date.now() - t0 < 8000, `the run took ${Date.now() - t0} ms to stop`);
});

let conversation = null;
await check("createChatMessage blocking: answer, conversation_id, message_id", async () => {
  const r = await chat.createChatMessage({}, "hello sdk", user, false);
  eq(r.status, 200, "HTTP status");
  eq(r.data.answer, "You said: hello sdk", "answer");
  expect(r.data.conversation_id && r.data.message_id, "conversation_id and message_id");
  conversation = r.data.conversation_id;
});

await check("createChatMessage streaming in the same conversation: message events, message_end", async () => {
  expect(conversation, "no conversation from the blocking message");
  const r = await chat.createChatMessage({}, "again", user, true, conversation);
  const evs = await readEvents(r.data);
  const names = evs.map((e) => e.event);
  const answer = evs.filter((e) => e.event === "message").map((e) => e.answer).join("");
  eq(answer, "You said: again", "the message events' answer");
  eq(names[names.length - 1], "message_end", "last event");
  expect(names.indexOf("message") < names.indexOf("message_end"), "message before message_end");
  expect(evs.every((e) => e.conversation_id === conversation), "conversation_id on every event");
});

await check("getConversations lists the conversation", async () => {
  const r = await chat.getConversations(user);
  expect(r.data.data.some((c) => c.id === conversation), `conversation ${conversation} not in the list`);
});

await check("getConversationMessages lists both turns with their answers", async () => {
  const r = await chat.getConversationMessages(user, conversation);
  eq(
    r.data.data.map((m) => [m.query, m.answer]),
    [["hello sdk", "You said: hello sdk"], ["again", "You said: again"]],
    "messages",
  );
});

await check("fileUpload (POST /files/upload) answers 201 with the file's id", async () => {
  const form = new FormData();
  form.append("file", new Blob(["hello file\n"], { type: "text/plain" }), "hello.txt");
  form.append("user", user);
  const r = await new DifyClient(wfKey, url).fileUpload(form);
  expect(r.status === 201 || r.status === 200, `HTTP status ${r.status}`);
  expect(r.data.id, "no id in the answer");
  eq(r.data.name, "hello.txt", "name");
  eq(r.data.size, 11, "size");
});

console.log(`# ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
