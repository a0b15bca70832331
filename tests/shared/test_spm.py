"""SPM's odd-generation table and figure on Gigaword."""

def test_odd_generation_table_and_figure(data_dir, tmp_path, capsys):
    from wean.cli import main

    reference = data_dir / "gigaword/test1951.dst"
    short = tmp_path / "short.txt"  # every headline cut to its first two words, first word doubled
    short.write_text("".join(f"{w[0]} {w[0]} {w[1] if len(w) > 1 else ''}\n" for w in
                             (line.split() for line in reference.read_text().splitlines())))
    out = tmp_path / "odd.png"
    assert main(["odd-gen", "--hyp", str(reference), str(short), "--labels", "reference,cut",
                 "--benchmark", "gigaword-test", "--data-root", str(data_dir), "--out", str(out)]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()[1:3]}
    assert rows["reference"] == ["0", "0", "0", "0"]
    repeats, with_repeats, shortfall, shorter = map(int, rows["cut"])
    assert with_repeats > 1500 and shorter > 1800 and shortfall > 5 * shorter
    assert out.read_bytes()[:4] == b"\x89PNG"
