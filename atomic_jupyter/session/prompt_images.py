"""Images for prompts, as the agent's ``ImageContent``: a path, bytes, or a PIL image."""

from __future__ import annotations

import base64
import io
import mimetypes
import os
from collections.abc import Iterable
from typing import Any

__all__ = ["image_content", "image_contents"]

_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _sniff(data: bytes) -> str | None:
    for signature, mime in _SIGNATURES:
        if data.startswith(signature):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_content(image: Any, mime_type: str | None = None) -> dict[str, str]:
    """One image as ``{"type": "image", "data": <base64>, "mimeType": ...}``.

    Parameters
    ----------
    image:
        A path (str or ``os.PathLike``), the image's bytes, or a PIL image (sent as PNG).
    mime_type:
        Overrides the type found from the bytes or the file name.

    Raises
    ------
    TypeError, ValueError
        When the object is no image this function knows, or its type cannot be told.
    """
    if isinstance(image, (str, os.PathLike)):
        with open(image, "rb") as f:
            data = f.read()
        mime = mime_type or _sniff(data) or mimetypes.guess_type(os.fspath(image))[0]
    elif isinstance(image, (bytes, bytearray, memoryview)):
        data = bytes(image)
        mime = mime_type or _sniff(data)
    elif hasattr(image, "save") and hasattr(image, "mode"):  # a PIL image, without importing PIL
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        data, mime = buffer.getvalue(), "image/png"
    else:
        raise TypeError(f"an image is a path, bytes or a PIL image, not {type(image).__name__}")
    if not mime or not mime.startswith("image/"):
        raise ValueError("could not tell the image's type; pass mime_type")
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime}


def image_contents(images: Iterable[Any] | None) -> list[dict[str, str]] | None:
    """Several images (None stays None); a single image may be given alone."""
    if images is None:
        return None
    if isinstance(images, (str, os.PathLike, bytes, bytearray, memoryview)) or hasattr(
        images, "save"
    ):
        images = [images]
    return [image_content(image) for image in images]
