"""Kernels started by the project run over IPC: no unencrypted-TCP warning in any log (issue 16 §5)."""

import subprocess
import sys
import textwrap


def test_papermill_kernel_over_ipc_runs_without_the_tcp_warning(tmp_path):
    script = textwrap.dedent(f"""
        import nbformat, papermill as pm
        from shopbench.kernels import IPCKernelManager
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell("print(6 * 7)")]
        nbformat.write(nb, {str(tmp_path / "a.ipynb")!r})
        pm.execute_notebook({str(tmp_path / "a.ipynb")!r}, {str(tmp_path / "b.ipynb")!r}, kernel_name="python3",
                            progress_bar=False, kernel_manager_class=IPCKernelManager)
        print(nbformat.read({str(tmp_path / "b.ipynb")!r}, 4).cells[0].outputs[0]["text"].strip())
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("42")
    assert "without encryption" not in out.stderr + out.stdout
