"""The rating page's routes (``wean serve --rating-sheet FOLDER``): ``GET /rate`` is the page,
``GET /v1/rate/sheet`` the sheet (and, with ``?rater=NAME``, what that rater has rated so far),
``POST /v1/rate`` one rating, saved to ``FOLDER/ratings/<rater>.jsonl`` before the answer. The
folder's ``key.json`` is never read here: the page cannot tell which system wrote what."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException

from wean.errors import WeanError
from wean.rating.sheet import candidate_ids, check_rater, check_rating, load_sheet, read_ratings, save_rating

PAGE = Path(__file__).parent / "static" / "rate.html"


class RatingRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    rater: str
    candidate: str
    adequacy: int
    fluency: int
    simplicity: int


def rating_routes(folder: Path) -> APIRouter:
    sheet = load_sheet(folder)  # a bad folder stops `wean serve` before it listens
    known = candidate_ids(sheet)
    # the candidates each rater has rated: their file read at their first post, then this server's
    # posts added (a rater's file is written by the one server that serves their page)
    rated_by: dict[str, set[str]] = {}
    router = APIRouter()

    @router.get("/rate", response_class=HTMLResponse, include_in_schema=False)
    async def page():
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    @router.get("/v1/rate/sheet")
    async def get_sheet(rater: str | None = None):
        """The protocol and the items; with ``rater``, the ratings that rater has given."""
        rated = {}
        if rater is not None:
            try:
                check_rater(rater)
            except WeanError as error:
                raise HTTPException(422, str(error)) from None
            rated = {r.candidate: r.scores for r in _rated(folder, rater, known)}
        return {**sheet, "rated": rated}

    @router.post("/v1/rate")
    async def rate(body: RatingRequest):
        """Save one rating; a later rating of the same candidate by the same rater replaces it."""
        try:
            rating = check_rating(body.rater, body.candidate, body.model_dump(), known)
        except WeanError as error:
            raise HTTPException(422, str(error)) from None
        try:
            save_rating(folder, rating)
        except OSError as error:  # a full disk, a folder made read-only: the rater must know it was not kept
            raise HTTPException(500, f"the rating was not saved: {error.strerror or error}") from None
        if rating.rater not in rated_by:  # read once per rater; each post then adds to it
            rated_by[rating.rater] = {earlier.candidate for earlier in _rated(folder, rating.rater, known)}
        rated_by[rating.rater].add(rating.candidate)
        return {"saved": rating.candidate, "rated": len(rated_by[rating.rater]), "candidates": len(known)}

    return router


def _rated(folder: Path, rater: str, known: set[str]) -> list:
    """What ``rater`` has rated so far; a line a crash cut short is passed over, not a 500."""
    path = folder / "ratings" / f"{rater}.jsonl"
    return read_ratings([path], known, skip_bad=True) if path.exists() else []
