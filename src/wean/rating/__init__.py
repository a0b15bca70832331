"""Human evaluation: blind rating sheets (:mod:`wean.rating.sheet`) and their scores (:mod:`wean.rating.score`)."""
