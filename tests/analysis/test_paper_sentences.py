"""Paper 004's sentences: the change before the title ("58% higher average IOPS") and a spread as a factor."""

from storbench.analysis.wording import delta_words, phrase
from storbench.results.metrics import metric_table

AVG, STDDEV, P99 = metric_table("""
    avg_iops    | average IOPS            | IOPS | mean | higher/lower | words-first
    iops_stddev | IOPS standard deviation | IOPS | mean | lower/higher | words-first factor
    p99_ms      | p99 latency             | ms   | mean | lower/higher | words-first
""")


def said(spec, new, old):
    return phrase(spec, spec.title, delta_words(spec, new / old - 1))


def test_the_paper_004_sentences():
    assert said(AVG, 158.0, 100.0) == "58% higher average IOPS"
    assert said(STDDEV, 1.0, 10.0) == "10× lower IOPS standard deviation"
    assert said(STDDEV, 10.0, 1.0) == "10× higher IOPS standard deviation"
    assert said(STDDEV, 7.0, 10.0) == "30% lower IOPS standard deviation"  # under 2×: a percent
    assert said(P99, 9.0, 10.0) == "10% lower p99 latency"  # words-first without factor: a percent
    assert (STDDEV.words_first, STDDEV.factor, AVG.factor, AVG.overall) == (True, True, False, False)
