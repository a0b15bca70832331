"""The model and its parts. Importing this package registers wean's own encoders, decoders,
output layers, encoder transforms and auxiliary losses (:mod:`wean.registry`)."""

from wean.models import (  # noqa: F401
    conditional_decoder, conv_encoder, coverage_loss, decoder, encoder, output_layer, pointer_generator, selective_gate,
    spm, word_attention,
)
