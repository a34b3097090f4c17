"""HTTP access for the travel tools: settings from the environment, a JSON file cache with a TTL, retries.

Every request has a timeout; 429/5xx and transport errors are retried a bounded number of times with
exponential backoff; what still fails becomes :class:`ServiceUnreachable` (never invented data).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from planwerk.tools.servers.failures import ToolFailure

USER_AGENT = "planwerk-travel-mcp/0.1 (+https://github.com/qvest-digital/Workshop_Agentic_AI)"

DEFAULT_URLS = {
    "NOMINATIM_URL": "https://nominatim.openstreetmap.org/search",
    "OPEN_METEO_FORECAST_URL": "https://api.open-meteo.com/v1/forecast",
    "OPEN_METEO_ARCHIVE_URL": "https://archive-api.open-meteo.com/v1/archive",
    "OVERPASS_URL": "https://overpass-api.de/api/interpreter",
}


class ServiceUnreachable(ToolFailure):
    """An upstream service could not be reached or kept failing (transport error, timeout, 429/5xx).

    Its kind is ``unavailable``: the tool is fine, the service behind it is not (a later try may work).
    """

    def __init__(self, message: str):
        super().__init__(message, kind="unavailable")


class UpstreamError(ValueError):
    """An upstream service rejected the request (4xx other than 429); the message carries its reason."""


@dataclass(frozen=True)
class HttpSettings:
    """Where and how the travel tools talk HTTP."""

    nominatim_url: str = DEFAULT_URLS["NOMINATIM_URL"]
    forecast_url: str = DEFAULT_URLS["OPEN_METEO_FORECAST_URL"]
    archive_url: str = DEFAULT_URLS["OPEN_METEO_ARCHIVE_URL"]
    overpass_url: str = DEFAULT_URLS["OVERPASS_URL"]
    timeout_s: float = 20.0
    retries: int = 2
    """Extra attempts after the first one, for 429/5xx and transport errors."""
    backoff_s: float = 0.5
    """First wait between attempts; doubles each time (capped at 8 s)."""
    cache_dir: Path | None = None
    """Where cached responses live; None disables the cache."""
    cache_ttl_s: float = 24 * 3600

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> HttpSettings:
        """Settings from ``NOMINATIM_URL``, ``OPEN_METEO_FORECAST_URL``, ``OPEN_METEO_ARCHIVE_URL``,
        ``OVERPASS_URL``, ``PLANWERK_HTTP_TIMEOUT``, ``PLANWERK_HTTP_RETRIES``, ``PLANWERK_CACHE_DIR``
        (default ``~/.cache/planwerk/http``; ``off`` disables) and ``PLANWERK_CACHE_TTL``."""
        env = os.environ if env is None else env

        def num(key: str, default: float) -> float:
            raw = env.get(key, "")
            try:
                return float(raw) if raw else default
            except ValueError:
                raise ValueError(f"{key} must be a number, got {raw!r}") from None

        cache = env.get("PLANWERK_CACHE_DIR") or str(Path.home() / ".cache" / "planwerk" / "http")
        return cls(
            nominatim_url=env.get("NOMINATIM_URL") or DEFAULT_URLS["NOMINATIM_URL"],
            forecast_url=env.get("OPEN_METEO_FORECAST_URL") or DEFAULT_URLS["OPEN_METEO_FORECAST_URL"],
            archive_url=env.get("OPEN_METEO_ARCHIVE_URL") or DEFAULT_URLS["OPEN_METEO_ARCHIVE_URL"],
            overpass_url=env.get("OVERPASS_URL") or DEFAULT_URLS["OVERPASS_URL"],
            timeout_s=num("PLANWERK_HTTP_TIMEOUT", cls.timeout_s),
            retries=int(num("PLANWERK_HTTP_RETRIES", cls.retries)),
            cache_dir=None if cache.lower() == "off" else Path(cache).expanduser(),
            cache_ttl_s=num("PLANWERK_CACHE_TTL", cls.cache_ttl_s),
        )


@dataclass(frozen=True)
class FileCache:
    """JSON values in files named by the hash of their key; entries older than ``ttl_s`` count as missing."""

    directory: Path
    ttl_s: float

    def _path(self, key: str) -> Path:
        return self.directory / f"{hashlib.sha256(key.encode()).hexdigest()}.json"

    def get(self, key: str) -> Any | None:
        """The cached value, or None when missing, expired or unreadable."""
        path = self._path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or time.time() - entry.get("cached_at", 0) > self.ttl_s:
            return None
        return entry.get("value")

    def set(self, key: str, value: Any) -> None:
        """Store ``value``; written to a temporary file first so readers never see half a file."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(key)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "cached_at": time.time(), "value": value}), encoding="utf-8")
        tmp.replace(path)


class _Retryable(Exception):
    def __init__(self, response: httpx.Response):
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, _Retryable | httpx.TransportError)


class HttpJson:
    """GET/POST returning JSON, with cache, timeout, User-Agent and bounded retries."""

    def __init__(self, settings: HttpSettings, client: httpx.AsyncClient | None = None):
        self.settings = settings
        self._client = client
        self._cache = FileCache(settings.cache_dir, settings.cache_ttl_s) if settings.cache_dir else None

    async def request(
        self,
        service: str,
        method: Literal["GET", "POST"],
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        data: Mapping[str, str] | None = None,
    ) -> Any:
        """The JSON body of ``method url``; ``service`` names the upstream in error messages."""
        key = json.dumps([method, url, dict(params or {}), dict(data or {})], sort_keys=True, default=str)
        if self._cache is not None and (hit := self._cache.get(key)) is not None:
            return hit
        try:
            body = await self._fetch(method, url, params=params, data=data)
        except _Retryable as exc:
            raise ServiceUnreachable(
                f"{service} service unreachable: {url} kept answering HTTP {exc.response.status_code} "
                f"after {self.settings.retries + 1} attempts"
            ) from None
        except httpx.TransportError as exc:
            raise ServiceUnreachable(
                f"{service} service unreachable: {url}: {type(exc).__name__}: {exc or 'no detail'}"
            ) from None
        if self._cache is not None:
            self._cache.set(key, body)
        return body

    async def _fetch(self, method: str, url: str, **kwargs: Any) -> Any:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.settings.retries + 1),
            wait=wait_exponential(multiplier=self.settings.backoff_s, max=8),
            retry=retry_if_exception(_is_retryable),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._once(method, url, **kwargs)
        raise AssertionError("unreachable")  # pragma: no cover - tenacity reraises

    async def _once(self, method: str, url: str, **kwargs: Any) -> Any:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self._client is not None:
            response = await self._client.request(method, url, headers=headers, **kwargs)
        else:
            async with httpx.AsyncClient(timeout=self.settings.timeout_s) as client:
                response = await client.request(method, url, headers=headers, **kwargs)
        if response.status_code == 429 or response.status_code >= 500:
            raise _Retryable(response)
        if response.status_code >= 400:
            raise UpstreamError(f"{url} rejected the request (HTTP {response.status_code}): {_reason(response)}")
        try:
            return response.json()
        except ValueError:
            raise UpstreamError(f"{url} answered with something that is not JSON: {response.text[:200]!r}") from None


def _reason(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or "no detail"
    if isinstance(body, dict) and body.get("reason"):
        return str(body["reason"])
    return json.dumps(body)[:200]
