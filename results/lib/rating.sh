# A blind rating's scores, sourced by the tables that rate: score_ratings OUT [SHEET] turns
# OUT/SHEET's filled sheets (SHEET/rater-*.csv, from raters given sheet.csv and sheet.json's
# protocol only; SHEET defaults to rating) into OUT/ratings.txt and OUT/ratings.json (for SHEET
# rating-X: OUT/ratings-X.*); nothing while no rater has returned a sheet.
score_ratings() {
    local which=${2:-rating}
    local sheet="$1/$which" name="ratings${which#rating}"
    ls "$sheet"/rater-*.csv > /dev/null 2>&1 || return 0
    "${WEAN:-wean}" rate score "$sheet" "$sheet"/rater-*.csv > "$1/$name.txt"
    "${WEAN:-wean}" rate score "$sheet" "$sheet"/rater-*.csv --json > "$1/$name.json"
}
