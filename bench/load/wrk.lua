-- The benchmark's wrk script (runner.go runs every wrk with it). done()
-- prints the figures runner.go reads; response() is defined only when
-- BENCH_BODY is set, so plain GET runs cost wrk nothing more.
--
-- BENCH_BODY: each request is a POST of string.format(BENCH_BODY, thread,
-- n), n counting the thread's requests from 0, to the thread's word of
-- BENCH_PATHS (else the URL's path); answers are counted by status (429s
-- with Cache-Control: no-store apart). BENCH_DELAY: milliseconds before
-- each request. BENCH_STOP: a thread stops after that many answers.
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

local body = os.getenv("BENCH_BODY")
if body then
  sent, answered, lastOK, nostore, counts = 0, 0, -1, 0, {}
  local wait, stop, paths = tonumber(os.getenv("BENCH_DELAY") or "0"), tonumber(os.getenv("BENCH_STOP") or "0"), {}
  for p in string.gmatch(os.getenv("BENCH_PATHS") or "", "%S+") do
    table.insert(paths, p)
  end

  function request()
    sent = sent + 1
    local path = wrk.path
    if #paths > 0 then
      path = paths[id % #paths + 1]
    end
    return wrk.format("POST", path, nil, string.format(body, id, sent - 1))
  end

  function response(status, headers)
    answered = answered + 1
    counts[status] = (counts[status] or 0) + 1
    if status == 200 then
      lastOK = answered - 1
    elseif status == 429 and headers["Cache-Control"] == "no-store" then
      nostore = nostore + 1
    end
    if stop > 0 and answered >= stop then
      wrk.thread:stop()
    end
  end

  if wait > 0 then
    function delay()
      return wait
    end
  end
end

function done(summary, latency)
  local e = summary.errors
  io.write(string.format("bench-run %d %d %d %d %d %d %d\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99), latency.max))
  for _, t in ipairs(threads) do
    local c = t:get("counts")
    if c then
      io.write(string.format("bench-thread %d %d %d %d", t:get("sent"), t:get("answered"), t:get("lastOK"), t:get("nostore")))
      for status, n in pairs(c) do
        io.write(string.format(" %d:%d", status, n))
      end
      io.write("\n")
    end
  end
end
