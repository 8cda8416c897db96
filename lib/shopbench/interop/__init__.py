"""Results other tools read (issue 30): inspect_ai eval logs of every task run (:mod:`.inspect_log`),
the tasks as inspect tasks (:mod:`shopbench._inspect_registry`) and re-scoring a log without re-running
the subject (:mod:`.rescore`). inspect-ai is an optional extra (``pip install -e '.[inspect]'``); without
it every run still writes the same content as JSON lines (``inspect.jsonl``), which
``shopbench logs convert`` turns into an ``.eval`` log once the extra is installed."""
