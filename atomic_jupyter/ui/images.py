"""Images from their data: the checks an image passes before it is shown, and its ``data:`` URL.

This is the only code in the package that builds a ``data:`` URL (``tests/package/test_architecture.py``
checks it). An image from the agent is shown only if its type is a raster type on
:data:`ALLOWED_TYPES` (PNG, JPEG, GIF, WebP; never SVG, which may hold script), its data is
base64 (``[A-Za-z0-9+/]*={0,2}``, a multiple of four characters long) no longer than the
caller's limit, and its first bytes are that format's signature. The URL is then built from the
allowed type's own name, never from the agent's spelling of it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from atomic_jupyter.ui.ansi import strip_ansi

__all__ = ["ALLOWED_TYPES", "CheckedImage", "RefusedImage", "check_image"]

#: The image types shown, by the names they may be given (lower case) -> the type's own name.
ALLOWED_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "image/png": "image/png",
        "image/jpeg": "image/jpeg",
        "image/jpg": "image/jpeg",
        "image/gif": "image/gif",
        "image/webp": "image/webp",
    }
)

_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


@dataclass(frozen=True)
class CheckedImage:
    """An image that passed every check.

    Parameters
    ----------
    mime:
        Its type, one of the values of :data:`ALLOWED_TYPES`.
    data:
        Its base64 data, checked.
    """

    mime: str
    data: str

    @property
    def data_url(self) -> str:
        """``data:<mime>;base64,<data>``: safe in a ``src`` attribute (no quote, no space)."""
        return f"data:{self.mime};base64,{self.data}"


@dataclass(frozen=True)
class RefusedImage:
    """An image that is not shown.

    Parameters
    ----------
    reason:
        Why, as plain text: ``"no data"``, ``"too large (5.1 MB)"``, ...
    """

    reason: str


def _signature_matches(mime: str, head: bytes) -> bool:
    if mime == "image/png":
        return head.startswith(b"\x89PNG\r\n\x1a\n")
    if mime == "image/jpeg":
        return head.startswith(b"\xff\xd8\xff")
    if mime == "image/gif":
        return head.startswith((b"GIF87a", b"GIF89a"))
    return head.startswith(b"RIFF") and head[8:12] == b"WEBP"


def _described(mime: object) -> str:
    """A refused type, as one short line of plain text."""
    if not isinstance(mime, str):
        return type(mime).__name__
    line = " ".join(strip_ansi(mime[:240]).split())
    return line if len(line) <= 60 else line[:59] + "…"


def check_image(mime: object, data: object, *, max_base64: int) -> CheckedImage | RefusedImage:
    """Check one image block from the agent before it is shown.

    Parameters
    ----------
    mime:
        Its MIME type as sent (any value).
    data:
        Its base64 data as sent (any value).
    max_base64:
        The longest data shown (characters of base64).

    Returns
    -------
    CheckedImage or RefusedImage
        The image to show, or why it is not shown. Never raises.
    """
    kind = ALLOWED_TYPES.get(mime.strip().lower()) if isinstance(mime, str) else None
    if kind is None:
        return RefusedImage(f"unsupported type {_described(mime)}")
    if not isinstance(data, str) or not data:
        return RefusedImage("no data")
    if len(data) > max_base64:
        return RefusedImage(f"too large ({len(data) * 3 // 4 / 1_000_000:.1f} MB)")
    if len(data) % 4 or not _BASE64.fullmatch(data):
        return RefusedImage("the data is not valid base64")
    try:
        head = base64.b64decode(data[:16], validate=True)
    except (binascii.Error, ValueError):
        return RefusedImage("the data is not valid base64")
    if not _signature_matches(kind, head):
        return RefusedImage(f"the data is not a {kind} image")
    return CheckedImage(kind, data)
