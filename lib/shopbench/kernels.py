"""Jupyter kernels the project starts (papermill runs, Voila pages) talk over local IPC sockets.

Over TCP, ipykernel 7 warns on every start that its traffic is unencrypted (issue 16 §5: the
warning filled every ``make paper`` log). IPC sockets are files in Jupyter's runtime folder, next
to the connection file, readable by this user only: nothing listens on a port, so there is nothing
to encrypt and nothing to warn about.
"""

from __future__ import annotations

from jupyter_client.manager import AsyncKernelManager
from traitlets import CaselessStrEnum


class IPCKernelManager(AsyncKernelManager):
    """``AsyncKernelManager`` with ``transport = "ipc"`` by default (papermill's ``kernel_manager_class``)."""

    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)
