"""Jupyter kernels the project starts (papermill runs, Voila pages) talk over local IPC sockets.

Over TCP, ipykernel 7 warns on every start that its traffic is unencrypted (issue 16 §5: the
warning filled every ``make paper`` log). IPC sockets are files in Jupyter's runtime folder, next
to the connection file, readable by this user only: nothing listens on a port, so there is nothing
to encrypt and nothing to warn about.
"""

from __future__ import annotations

import os
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from traitlets import CaselessStrEnum

KERNEL_LOG_ENV = "SHOPBENCH_KERNEL_LOG"


class IPCKernelManager(AsyncKernelManager):
    """``AsyncKernelManager`` with ``transport = "ipc"`` by default (papermill's ``kernel_manager_class``)."""

    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        """With ``$SHOPBENCH_KERNEL_LOG`` set (the pipeline sets it per notebook), the kernel process's own
        stdout and stderr (its logger, C libraries) go to that file instead of the terminal: a Ctrl-C
        that stops the run is then one line, not the kernel's shutdown tracebacks (issue 25 §4). The
        cells' output is unaffected (it travels in the notebook)."""
        path = os.environ.get(KERNEL_LOG_ENV)
        if not path:
            return await super()._async_launch_kernel(kernel_cmd, **kw)
        with open(path, "ab") as log:  # the child keeps its own copy of the descriptor
            kw["stdout"] = kw["stderr"] = log
            return await super()._async_launch_kernel(kernel_cmd, **kw)
