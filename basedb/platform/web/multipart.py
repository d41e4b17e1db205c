"""multipart/form-data bodies (RFC 7578), parsed from bytes already read in full.

The platform reads upload bodies with its size-limited reader (`http.read_body`) and
then parses them here; the parser is small because the platform only accepts a few named
fields, each once. Problems become 9499 refusals naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import Message

from basedb.core.protocol import ApiFailure, bad_request

MAX_PARTS = 16
MAX_HEADER_BYTES = 8 * 1024


@dataclass(frozen=True, slots=True)
class Part:
    name: str
    data: bytes
    filename: str | None = None
    content_type: str | None = None

    def text(self) -> str:
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            raise bad_request(f"Form field {self.name} is not UTF-8 text",
                              parameter=f"/{self.name}",
                              fix="send the field as UTF-8 text") from None


def boundary_of(content_type: str | None) -> str:
    """The boundary of a multipart/form-data Content-Type, or a 9499 refusal."""
    header = Message()
    header["content-type"] = content_type or ""
    boundary = header.get_param("boundary")
    if header.get_content_type() != "multipart/form-data" or not isinstance(boundary, str) \
            or not 1 <= len(boundary) <= 70:
        raise bad_request("The request must be multipart/form-data with a boundary",
                          parameter="/", received=content_type or "",
                          fix="upload the file as a multipart form (curl -F "
                          "artifact=@site.zip -F fingerprint=sha256:…)")
    return boundary


def parse_form(body: bytes, content_type: str | None) -> dict[str, Part]:
    """The fields of a multipart/form-data body, by name."""
    delimiter = b"--" + boundary_of(content_type).encode("latin-1")
    start = body.find(delimiter)
    if start < 0 or (start > 0 and body[start - 2:start] != b"\r\n"):
        raise _malformed("it does not start with the boundary")
    parts: dict[str, Part] = {}
    position = start + len(delimiter)
    while True:
        position = _skip_padding(body, position)
        if body.startswith(b"--", position):
            return parts  # the close delimiter; an epilogue after it is ignored
        if not body.startswith(b"\r\n", position):
            raise _malformed("a boundary line is not followed by a line break")
        position += 2
        end = body.find(b"\r\n" + delimiter, position)
        if end < 0:
            raise _malformed("a part is not terminated by the boundary")
        part = _part(body[position:end])
        if part.name in parts:
            raise bad_request(f"Form field {part.name} is sent twice",
                              parameter=f"/{part.name}", fix="send each field once")
        parts[part.name] = part
        if len(parts) > MAX_PARTS:
            raise _malformed(f"it has more than {MAX_PARTS} parts")
        position = end + 2 + len(delimiter)


def _skip_padding(body: bytes, position: int) -> int:
    # RFC 2046 allows linear white space between a boundary and its line break.
    while position < len(body) and body[position] in b" \t":
        position += 1
    return position


def _part(raw: bytes) -> Part:
    if raw.startswith(b"\r\n"):
        head, content = b"", raw[2:]
    else:
        head, separator, content = raw.partition(b"\r\n\r\n")
        if not separator:
            raise _malformed("a part has no blank line after its headers")
    if len(head) > MAX_HEADER_BYTES:
        raise _malformed("a part's headers are too long")
    headers = Message()
    for line in head.decode("utf-8", errors="replace").split("\r\n"):
        key, colon, value = line.partition(":")
        if not colon:
            raise _malformed(f"a part has the header line {line[:40]!r}")
        headers[key.strip()] = value.strip()
    if (headers.get("content-disposition") or "").split(";")[0].strip().lower() != "form-data":
        raise _malformed("a part has no Content-Disposition: form-data header")
    name = headers.get_param("name", header="content-disposition")
    filename = headers.get_param("filename", header="content-disposition")
    if not isinstance(name, str) or not name:
        raise _malformed("a part has no field name")
    return Part(name=name, data=content,
                filename=filename if isinstance(filename, str) else None,
                content_type=headers.get("content-type"))


def _malformed(why: str) -> ApiFailure:
    return bad_request(f"The multipart body is malformed: {why}", parameter="/",
                       fix="send a multipart/form-data body as HTTP clients build it "
                       "(curl -F, httpx files=…)")
