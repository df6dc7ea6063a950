/**
 * The container backend. Only the factory's package is exported: the server finds the backend through
 * {@link java.util.ServiceLoader} (as a provider of {@code SandboxBackendFactory}, here and in
 * {@code META-INF/services} for the class path) and never sees its parts. The project's own modules and protobuf
 * are automatic modules (no module-info of their own), named after their jars.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module agentenv.backend.container {
    requires transitive agentenv.spi; // the factory's signatures are the SPI's
    requires agentenv.envd.client;
    requires com.fasterxml.jackson.databind;
    requires com.google.protobuf;
    requires org.slf4j;

    exports io.agentenv.backend.container;

    // Jackson binds the OCI config and the saved-state and instance JSON records by reflection
    opens io.agentenv.backend.container.runtime to
            com.fasterxml.jackson.databind;
    opens io.agentenv.backend.container.lifecycle to
            com.fasterxml.jackson.databind;

    provides io.agentenv.spi.SandboxBackendFactory with
            io.agentenv.backend.container.ContainerBackendFactory;
}
