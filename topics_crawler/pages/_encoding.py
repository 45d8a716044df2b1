"""A page body's text: the encoding its byte order mark or declaration names, a clean
UTF-8 check that makes no text copy, and a decode that never raises.
"""

from __future__ import annotations

import codecs

#: Byte order marks that name the encoding whatever the page declares (UTF-32 first: its
#: little-endian mark starts with UTF-16's). A UTF-8 mark is left to the UTF-8 decoder.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


#: Bytes decoded at a time to check a body is clean UTF-8: small enough that an emoji widens
#: only its own chunk of text to four bytes a character, not the whole page (a third cheaper
#: than one decode of a typical page).
_VALIDATE_CHUNK = 1 << 14


def reads_as_utf8(body: bytes, encoding: str | None) -> bool:
    """True when :func:`decode` would read ``body`` as UTF-8 and it is clean UTF-8,
    checked chunk by chunk so no text copy of the whole page is made."""
    if any(body.startswith(mark) for mark, _codec in _BOMS):
        return False
    if encoding:
        try:
            declared = codecs.lookup(encoding).name
        except LookupError:
            declared = "utf-8"
        if declared != "utf-8":
            return False
    if body.isascii():  # ASCII is clean UTF-8: no decode to find out
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(body)
    try:
        for start in range(0, len(body), _VALIDATE_CHUNK):
            decoder.decode(view[start : start + _VALIDATE_CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def decode(body: bytes | str, encoding: str | None) -> tuple[str, str | None]:
    """Text of a page body (the encoding its byte order mark names, else the declared one,
    else UTF-8, never raising) and the codec that read the bytes cleanly (None: str or
    lossy)."""
    if isinstance(body, str):
        return body, None
    bom = next((codec for mark, codec in _BOMS if body.startswith(mark)), None)
    for candidate in (bom, encoding, "utf-8"):
        if not candidate:
            continue
        try:
            return body.decode(candidate), codecs.lookup(candidate).name
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("utf-8", errors="replace"), None
