"""What one ``wean serve`` accepts; each is a command-line option of the same name."""

from dataclasses import dataclass, field


def _limit(default, help: str):
    return field(default=default, metadata={"help": help})


@dataclass
class Limits:
    max_texts: int = _limit(32, "texts per request")
    max_chars: int = _limit(1000, "characters per text")
    max_tokens: int = _limit(200, "model tokens per text, after tokenization")
    max_beam: int = _limit(10, "beam width a request may ask for")
    max_output_length: int = _limit(200, "max_length a request may ask for")
    max_body_bytes: int = _limit(256 * 1024, "bytes per request body")
    max_request_steps: int = _limit(16000, "texts x beam x max_length a request may ask for: a bound on its model time")
    max_batch_size: int = _limit(32, "texts per model call, across concurrent requests")
    max_wait_ms: float = _limit(10.0, "how long a request waits for others to share its batch")
    max_queue_texts: int = _limit(256, "texts waiting for the model before new requests get a 503")
    max_queue_s: float = _limit(30.0, "seconds a request may wait for the model before it gets a 503, unrun")
    max_request_s: float = _limit(60.0, "seconds a request may take in all: past them its search stops and it gets a 503")
    max_connections: int = _limit(1000, "connections open at once: past them the one idle longest, else the newcomer, "
                                  "gets a 503 (lowered below the open-file limit)")
    header_timeout_s: float = _limit(10.0, "seconds a client may take to send a request's headers")
    body_timeout_s: float = _limit(10.0, "seconds a request body may pause between two of its parts")
    body_deadline_s: float = _limit(30.0, "seconds a request's whole body may take to arrive, however it trickles")
