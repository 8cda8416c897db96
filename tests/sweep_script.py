"""A sweep run as a separate process by test_resume (killed with SIGKILL mid-run, then restarted)."""

import sys

from shopbench.llm import Call, Gateway

api_base, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
gw = Gateway(cache_dir=f"{out}/cache", log_dir=f"{out}/calls", concurrency={"openai": 4}, progress=False)
calls = [Call(f"item{i:03d}", "openai/fake", [{"role": "user", "content": f"q{i} [[fake:latency=0.05]]"}],
              api_base=api_base) for i in range(n)]  # fmt: skip
rows = gw.run(calls, "sweep")
print("DONE", len(rows), sum(r["status"] == "ok" for r in rows))
