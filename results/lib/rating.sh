# A blind rating's scores, sourced by the tables that rate: score_ratings OUT turns OUT/rating's
# filled sheets (rating/rater-*.csv, from raters given sheet.csv and sheet.json's protocol only)
# into OUT/ratings.txt and OUT/ratings.json; nothing while no rater has returned a sheet.
score_ratings() {
    ls "$1"/rating/rater-*.csv > /dev/null 2>&1 || return 0
    "${WEAN:-wean}" rate score "$1/rating" "$1"/rating/rater-*.csv > "$1/ratings.txt"
    "${WEAN:-wean}" rate score "$1/rating" "$1"/rating/rater-*.csv --json > "$1/ratings.json"
}
