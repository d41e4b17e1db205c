"""Where basedb keeps secrets (app secrets, user tokens, cached tenant tokens), and the
lock that serialises token refreshes across processes.

    $BASEDB_SECRET_STORE   auto (default): the OS keyring when the `keyring` package is
                           installed and has a working backend, else encrypted files
                           keyring: the OS keyring, or an error saying why not
                           file: encrypted files only

Files live in `<config dir>/secrets/` (mode 0700), one per secret (mode 0600), written
atomically, named by a readable prefix and a hash of the key. Each holds its value
encrypted with AES-GCM (`cryptography`), as lark-cli encrypts its secrets on Linux
(`internal/keychain/keychain_other.go`): a random 96-bit nonce per write, the secret's key
as associated data (a file copied under another key does not decrypt), under a 256-bit
key made once and kept apart from the data, in `<state dir>/secrets.key` (0600). A copy
of the config directory alone (a backup, a synced dotfiles repository) holds no usable
secret. A file written in plaintext by an earlier basedb is read and encrypted again.

Locks live in `<config dir>/locks/` (`filelock`, which works on every OS). A secret's
value never appears in a repr, a message or a log.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import filelock

from basedb.core import environment, paths
from basedb.core.atomic import PRIVATE_FILE_MODE, ensure_private_dir, write_file_atomically
from basedb.core.errors import InputError, UsageError

SERVICE = "basedb"
STORE_ENV = environment.SECRET_STORE
LOCK_TIMEOUT = 30.0
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
SEALED = "basedb-aes-gcm-1:"
"""The prefix of an encrypted secret file; what follows is base64(nonce + ciphertext)."""
KEY_BYTES = 32
NONCE_BYTES = 12


class SecretStore(Protocol):
    name: str

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...

    def delete(self, key: str) -> None: ...


class FileStore:
    """One 0600 file per secret in a 0700 directory, encrypted under a key kept apart."""

    name = "file"

    def __init__(self, root: Path | None = None, key_path: Path | None = None) -> None:
        self.root = root or paths.config_dir() / "secrets"
        self.key_path = key_path or paths.state_dir() / "secrets.key"

    def __repr__(self) -> str:
        return f"FileStore({str(self.root)!r})"

    def path(self, key: str) -> Path:
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        return self.root / f"{_UNSAFE.sub('_', key)[:60]}-{digest}.secret"

    def get(self, key: str) -> str | None:
        try:
            stored = self.path(key).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"Cannot read the stored secret {self.path(key)}: {exc}.",
                             code="SECRET_UNREADABLE",
                             hint="Fix its permissions or delete it and sign in again.") from exc
        if not stored:
            return None
        if not stored.startswith(SEALED):  # written in plaintext by an earlier basedb
            self.set(key, stored)
            return stored
        return self._open(key, stored)

    def set(self, key: str, value: str) -> None:
        try:
            ensure_private_dir(self.root)
            write_file_atomically(self.path(key), self._seal(key, value),
                                  mode=PRIVATE_FILE_MODE)
        except OSError as exc:
            raise InputError(f"Cannot store a secret in {self.root}: {exc.strerror or exc}.",
                             code="CONFIG_NOT_WRITABLE",
                             hint="Make it a writable directory, or point $BASEDB_CONFIG_DIR "
                                  "at one.") from exc

    def delete(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(key).unlink()

    def _seal(self, key: str, value: str) -> str:
        # Lazy: only a command that stores a secret needs the cipher.
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415

        nonce = secrets.token_bytes(NONCE_BYTES)
        sealed = AESGCM(self._key(create=True)).encrypt(nonce, value.encode("utf-8"),
                                                        key.encode("utf-8"))
        return SEALED + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")

    def _open(self, key: str, stored: str) -> str:
        from cryptography.exceptions import InvalidTag  # noqa: PLC0415
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415

        unreadable = InputError(
            f"The stored secret {self.path(key)} cannot be decrypted with {self.key_path}.",
            code="SECRET_UNREADABLE",
            hint="The key was replaced or the file altered: delete the file and sign in "
                 "again (`basedb auth login`).")
        try:
            raw = base64.urlsafe_b64decode(stored[len(SEALED):].strip())
            opened = AESGCM(self._key(create=False)).decrypt(
                raw[:NONCE_BYTES], raw[NONCE_BYTES:], key.encode("utf-8"))
            return opened.decode("utf-8")
        except (InvalidTag, ValueError, UnicodeDecodeError):
            raise unreadable from None

    def _key(self, *, create: bool) -> bytes:
        """The store's key: read, or made once (by whichever process gets there first)."""
        try:
            key = self.key_path.read_bytes()
        except FileNotFoundError:
            if not create:
                raise InputError(
                    f"The key of the secret store, {self.key_path}, is missing.",
                    code="SECRET_KEY_MISSING",
                    hint="Secrets stored under another key cannot be read: sign in again "
                         "(`basedb auth login`).") from None
            return self._new_key()
        except OSError as exc:
            raise InputError(f"Cannot read the key of the secret store {self.key_path}: "
                             f"{exc.strerror or exc}.", code="SECRET_UNREADABLE",
                             hint="Fix its permissions (0600, yours).") from exc
        if len(key) != KEY_BYTES:
            raise InputError(f"The key of the secret store {self.key_path} is damaged.",
                             code="SECRET_UNREADABLE",
                             hint="Delete it and the files in its secrets directory, then "
                                  "sign in again.")
        return key

    def _new_key(self) -> bytes:
        ensure_private_dir(self.key_path.parent)
        candidate = self.key_path.with_name(f".{self.key_path.name}.{secrets.token_hex(8)}")
        write_file_atomically(candidate, secrets.token_bytes(KEY_BYTES),
                              mode=PRIVATE_FILE_MODE)
        try:
            os.link(candidate, self.key_path)  # fails when another process made one first
        except FileExistsError:
            pass
        finally:
            candidate.unlink()
        return self._key(create=False)


class KeyringStore:
    """The OS keyring through the `keyring` package (service "basedb")."""

    name = "keyring"

    def __init__(self, backend: object) -> None:
        self._keyring = backend

    def __repr__(self) -> str:
        return "KeyringStore()"

    def get(self, key: str) -> str | None:
        value = self._keyring.get_password(SERVICE, key)  # type: ignore[attr-defined]
        return value if isinstance(value, str) and value else None

    def set(self, key: str, value: str) -> None:
        self._keyring.set_password(SERVICE, key, value)  # type: ignore[attr-defined]

    def delete(self, key: str) -> None:
        with contextlib.suppress(Exception):  # absent already: nothing to delete
            self._keyring.delete_password(SERVICE, key)  # type: ignore[attr-defined]


def _usable_keyring() -> object | None:
    try:
        # Lazy: an optional dependency, and importing it looks for OS backends.
        import keyring  # noqa: PLC0415
        import keyring.backends.fail  # noqa: PLC0415
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, keyring.backends.fail.Keyring) or getattr(
            backend, "priority", 1) <= 0:
        return None
    return keyring


def secret_store() -> SecretStore:
    """The store $BASEDB_SECRET_STORE selects (see the module docstring)."""
    choice = os.environ.get(STORE_ENV, "auto").strip().lower() or "auto"
    if choice not in ("auto", "keyring", "file"):
        raise UsageError(f"${STORE_ENV} is {choice!r}.", code="SECRET_STORE_INVALID",
                         hint="Set it to auto, keyring or file.")
    if choice == "file":
        return FileStore()
    backend = _usable_keyring()
    if backend is not None:
        return KeyringStore(backend)
    if choice == "keyring":
        raise UsageError(f"${STORE_ENV}=keyring, but no usable OS keyring was found.",
                         code="KEYRING_UNAVAILABLE",
                         hint="pip install keyring (with a backend for this OS), or set "
                              f"{STORE_ENV}=file to keep secrets in 0600 files.")
    return FileStore()


@contextlib.contextmanager
def locked(name: str, *, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """A lock shared by every basedb process on this machine (`<config dir>/locks/`)."""
    root = paths.config_dir() / "locks"
    try:
        ensure_private_dir(root)
    except OSError as exc:
        raise InputError(f"Cannot create the lock directory {root}: {exc.strerror or exc}.",
                         code="CONFIG_NOT_WRITABLE",
                         hint="Point $BASEDB_CONFIG_DIR at a writable directory.") from exc
    lock = filelock.FileLock(str(root / f"{_UNSAFE.sub('_', name)}.lock"), timeout=timeout,
                             mode=PRIVATE_FILE_MODE)
    try:
        with lock:
            yield
    except filelock.Timeout:
        raise InputError(f"Another basedb process held the lock {name!r} for {timeout:g}s.",
                         code="LOCK_TIMEOUT",
                         hint="Wait for it to finish, then run the command again.") from None
