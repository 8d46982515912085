-- wrk script for tests/load/load.py: POSTs one body file at saturation and
-- counts, per wrk thread, answers that are not 2xx and answers whose body
-- length is not the expected one; done() prints the totals and latency
-- percentiles as "key value" lines for the driver to parse.
--
-- Environment: LOAD_BODY (file), LOAD_ACCEPT (Accept header),
-- LOAD_EXPECT_LEN (expected body bytes; unset or 0: not checked).

local body_path = assert(os.getenv("LOAD_BODY"), "LOAD_BODY unset")
local f = assert(io.open(body_path, "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = os.getenv("LOAD_ACCEPT") or "application/json"

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  non2xx = 0
  badlen = 0
  expect_len = tonumber(os.getenv("LOAD_EXPECT_LEN") or "0") or 0
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
  elseif expect_len > 0 and #body ~= expect_len then
    badlen = badlen + 1
  end
end

function done(summary, latency, requests)
  local n, b = 0, 0
  for _, t in ipairs(threads) do
    n = n + t:get("non2xx")
    b = b + t:get("badlen")
  end
  local e = summary.errors
  io.write(string.format("load_requests %d\n", summary.requests))
  io.write(string.format("load_duration_us %d\n", summary.duration))
  io.write(string.format("load_socket_errors %d\n", e.connect + e.read + e.write + e.timeout))
  io.write(string.format("load_errors_detail connect=%d read=%d write=%d timeout=%d status=%d\n",
                         e.connect, e.read, e.write, e.timeout, e.status))
  io.write(string.format("load_non2xx %d\n", n))
  io.write(string.format("load_badlen %d\n", b))
  for _, p in ipairs({50, 90, 99, 99.9}) do
    io.write(string.format("load_p%s_us %d\n", tostring(p), latency:percentile(p)))
  end
  io.write(string.format("load_max_us %d\n", latency.max))
end
