"""The model and its parts. Importing this package registers wean's own encoders, decoders and
output layers (:mod:`wean.registry`)."""

from wean.models import conditional_decoder, conv_encoder, decoder, encoder, output_layer, word_attention  # noqa: F401
