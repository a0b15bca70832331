# fairseq (fairseq-fixed 0.12.3.1) flags; sourced by bench/peers/run.sh's fairseq commands.
# The benchmark model in fairseq's `lstm` architecture: 2-layer biLSTM encoder (128 per direction),
# 2-layer LSTM decoder 256 with input feeding and fairseq's attention layer (h_s . W h_t: Luong
# `general`), embeddings 256, untied output, dropout 0.3; Adam 1e-3 constant, clip 5, 300 updates
# of 64 sentences, no validation, CPU.
PREPROCESS=(--source-lang src --target-lang dst --nwordssrc 10000 --nwordstgt 10000 --workers 1)
TRAIN=(--cpu --num-workers 0 --seed 1 --arch lstm
    --encoder-embed-dim 256 --encoder-hidden-size 128 --encoder-layers 2 --encoder-bidirectional
    --decoder-embed-dim 256 --decoder-hidden-size 256 --decoder-layers 2 --decoder-out-embed-dim 256
    --decoder-attention True --dropout 0.3
    --optimizer adam --adam-betas '(0.9,0.999)' --lr 1e-3 --lr-scheduler fixed --clip-norm 5
    --criterion cross_entropy --batch-size 64 --max-update 300
    --log-format simple --log-interval 10 --disable-validation --no-epoch-checkpoints)
# 15 words + </s>: 16 decoder steps per sentence, as every toolkit here
GENERATE=(--gen-subset test --cpu --num-workers 0 --batch-size 64 --min-len 15 --max-len-a 0 --max-len-b 15)
