"""Go's ``encoding/base64`` standard decoder, as ``encoding/json`` decodes ``[]byte`` fields.

Python's decoder accepts and rejects different inputs and reports no offset; kube-apiserver answers
``illegal base64 data at input byte N``, so Secret/ConfigMap data errors need Go's exact decoder.
"""

from __future__ import annotations

_B64_ALPHABET = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}


class CorruptInputError(ValueError):
    """``base64.CorruptInputError``."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")


def go_base64_decode(src: str) -> bytes:
    """``base64.StdEncoding.DecodeString``, as ``encoding/json`` decodes ``[]byte`` fields.

    Raises ValueError with Go's ``illegal base64 data at input byte N`` text (CR/LF are skipped).
    """
    data = src.encode()
    out = bytearray()
    si = 0
    n = len(data)
    while si < n:
        quantum = [0, 0, 0, 0]
        dlen = 4
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return bytes(out)
                raise CorruptInputError(si - j)
            ch = data[si]
            si += 1
            value = _B64_ALPHABET.get(chr(ch))
            if value is not None:
                quantum[j] = value
                j += 1
                continue
            if ch in (0x0A, 0x0D):
                continue
            if ch != 0x3D:  # '='
                raise CorruptInputError(si - 1)
            if j in (0, 1):
                raise CorruptInputError(si - 1)
            if j == 2:
                while si < n and data[si] in (0x0A, 0x0D):
                    si += 1
                if si == n:
                    raise CorruptInputError(n)
                if data[si] != 0x3D:
                    raise CorruptInputError(si - 1)
                si += 1
            while si < n and data[si] in (0x0A, 0x0D):
                si += 1
            if si < n:
                raise CorruptInputError(si)
            dlen = j
            break
        val = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3]
        out.extend(val.to_bytes(3, "big")[: dlen - 1])
    return bytes(out)
