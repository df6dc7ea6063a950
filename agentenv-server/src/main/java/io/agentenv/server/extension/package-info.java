/**
 * The operator's custom extension reached over HTTP ({@link io.agentenv.server.extension.HttpLifecycleHooks}), the
 * adapter behind the orchestrator's {@link io.agentenv.orchestrator.LifecycleHooks} seam.
 */
package io.agentenv.server.extension;
