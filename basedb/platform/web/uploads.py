"""multipart/form-data uploads, parsed as they stream in.

Starlette's form parser (python-multipart) reads the body chunk by chunk: files spool to
a temporary file past 1 MB instead of memory, and it enforces the number of files and
fields and the size of each text field. On top of that the body as a whole is capped
while it streams (`http.body_chunks`), and only the fields an endpoint names are
accepted, each once. Problems become 9499 refusals naming the field.
"""

from __future__ import annotations

from collections.abc import Collection

from python_multipart.multipart import parse_options_header
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from basedb.core.frozen import frozen_dataclass
from basedb.platform.web.bodies import body_chunks
from basedb.protocol import bad_request

MAX_TEXT_FIELD_BYTES = 4 * 1024


@frozen_dataclass
class Form:
    """The fields of an upload: text fields and files, each sent once."""

    texts: dict[str, str]
    files: dict[str, UploadFile]
    raw: FormData

    async def close(self) -> None:
        await self.raw.close()


async def read_form(request: Request, *, limit: int, texts: Collection[str],
                    files: Collection[str]) -> Form:
    """The multipart form of `request` with only the named text fields and files, the
    whole body at most `limit` bytes. Close it when done (temporary files)."""
    content_type, options = parse_options_header(request.headers.get("content-type", ""))
    if content_type != b"multipart/form-data" or not options.get(b"boundary"):
        raise bad_request("The request must be multipart/form-data with a boundary",
                          parameter="/", received=request.headers.get("content-type", ""),
                          fix="upload the file as a multipart form (curl -F "
                          "artifact=@site.zip -F fingerprint=sha256:…)")
    # A little room past the named fields, so that a stray field is refused by name.
    parser = MultiPartParser(request.headers, body_chunks(request, limit),
                             max_files=len(files) + 1, max_fields=len(texts) + 2,
                             max_part_size=MAX_TEXT_FIELD_BYTES)
    try:
        raw = await parser.parse()
    except MultiPartException as exc:
        raise bad_request(f"The multipart body was refused: {exc.message}", parameter="/",
                          fix="send only the documented fields, each once, as HTTP clients "
                          "build multipart forms (curl -F, httpx files=…)") from None
    form = Form(texts={}, files={}, raw=raw)
    try:
        _sort(form, raw, texts, files)
    except BaseException:
        await raw.close()
        raise
    return form


def _sort(form: Form, raw: FormData, texts: Collection[str], files: Collection[str]) -> None:
    allowed = [*files, *texts]
    for name, value in raw.multi_items():
        if name not in allowed:
            raise bad_request(f"Unknown form field {name}", parameter=f"/{name}",
                              fix=f"send only {', '.join(allowed)}", candidates=allowed)
        if name in form.texts or name in form.files:
            raise bad_request(f"Form field {name} is sent twice", parameter=f"/{name}",
                              fix="send each field once")
        if name in files:
            if not isinstance(value, UploadFile):
                raise bad_request(f"Form field {name} must be a file", parameter=f"/{name}",
                                  fix=f"send it as a file part (curl -F {name}=@file)")
            form.files[name] = value
        elif isinstance(value, str):
            form.texts[name] = value
        else:
            raise bad_request(f"Form field {name} must be text, not a file",
                              parameter=f"/{name}", fix="send it as a plain form field")
