import pytest

from wean.errors import WeanError
from wean.textio import check_same_length, empty_line_numbers, read_lines


def test_final_newline_neither_adds_nor_drops_a_line(tmp_path):
    with_newline, without = tmp_path / "a.txt", tmp_path / "b.txt"
    with_newline.write_bytes(b"one\ntwo\n")
    without.write_bytes(b"one\ntwo")
    assert read_lines(with_newline) == read_lines(without) == ["one", "two"]


def test_crlf_and_surrounding_spaces_are_removed_and_empty_lines_kept(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b" one \r\n\r\ntwo\r\n")
    assert read_lines(path) == ["one", "", "two"]
    assert empty_line_numbers(read_lines(path)) == [2]


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("fine\nstill fine\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(WeanError, match=r"latin1.txt:3: not valid UTF-8 \(byte 0xe9"):
        read_lines(path)


def test_missing_file(tmp_path):
    with pytest.raises(WeanError, match="nope.txt: file not found"):
        read_lines(tmp_path / "nope.txt")


def test_unequal_lengths_name_the_file():
    with pytest.raises(WeanError, match="refs.txt: has 1 lines but hyp.txt has 2"):
        check_same_length([("hyp.txt", ["a", "b"]), ("refs.txt", ["a"])])
