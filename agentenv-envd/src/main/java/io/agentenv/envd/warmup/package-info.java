/**
 * envd's warm-up, production behaviour of every envd and of a template's boot: {@link
 * io.agentenv.envd.warmup.DeferredSetUps} (the two slow one-time set-ups every envd runs shortly after it serves) and
 * {@link io.agentenv.envd.warmup.RequestPathWarmup} ({@code --warm-requests}: the requests a template's boot envd sends
 * itself before the host checkpoints it, so every sandbox restored from that checkpoint starts with its request path
 * compiled) with its parts ({@code JitSettling}, {@code CompilerThreads}, {@code YoungCollection}, {@code StderrFile},
 * {@code LoopbackHttp}). The build-time recording of envd's AOT cache is not here: it lives in agentenv-build-tools and
 * drives an unmodified envd from outside.
 */
package io.agentenv.envd.warmup;
