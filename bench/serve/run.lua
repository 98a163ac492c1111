-- wrk script for bench/serve_bench.sh: blocking runs of the trivial app.
--
--   wrk -t T -c C -d D -s bench/serve/run.lua URL -- APP_KEY USER [IDS_PREFIX]
--
-- POSTs {"inputs":{"q":"hello"},"response_mode":"blocking","user":USER} to
-- /v1/workflows/run with Authorization: Bearer APP_KEY.  Each thread counts
-- the requests it sends and, with IDS_PREFIX, writes the workflow_run_id of
-- every 2xx answer to IDS_PREFIX<thread> (one per line) so the caller can
-- look each of them up in the database.  At the end one line for the shell:
--
--   WRK requests=… sent=… non2xx=… connect=… read=… write=… timeout=…
--       duration_us=… p50_us=… p90_us=… p99_us=… max_us=… mean_us=…
--
-- requests: answers wrk read; sent: requests it wrote (the difference is
-- what was in flight when wrk stopped); non2xx: wrk's status errors (its
-- count of answers with a status above 399: sluice sends no 3xx here).
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  sent = 0
  local key = args[1] or ""
  local user = args[2] or "bench"
  if args[3] then
    ids = io.open(args[3] .. tid, "w")
  end
  req = wrk.format("POST", "/v1/workflows/run", {
    ["Authorization"] = "Bearer " .. key,
    ["Content-Type"] = "application/json",
  }, '{"inputs":{"q":"hello"},"response_mode":"blocking","user":"' .. user .. '"}')
end

function request()
  sent = sent + 1
  return req
end

function response(status, headers, body)
  if ids and status >= 200 and status < 300 then
    local id = body:match('"workflow_run_id":"([^"]+)"')
    ids:write(id or "?", "\n")
  end
end

function done(summary, latency, requests)
  local sent_total = 0
  for _, t in ipairs(threads) do
    sent_total = sent_total + (t:get("sent") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    "WRK requests=%d sent=%d non2xx=%d connect=%d read=%d write=%d timeout=%d " ..
    "duration_us=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d mean_us=%.0f\n",
    summary.requests, sent_total, e.status, e.connect, e.read, e.write, e.timeout,
    summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean))
end
