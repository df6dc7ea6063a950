package io.agentenv.envd.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.envd.protocol.connect.ConnectCode;
import io.agentenv.envd.protocol.connect.RpcException;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class BasicAuthTest {

    @Test
    void the_sdk_header_names_the_user_with_an_empty_password() {
        assertThat(ConnectDispatch.basicAuthUser("Basic cm9vdDo=")).contains("root");
        assertThat(ConnectDispatch.basicAuthUser("basic dXNlcjpwYXNz")).contains("user");
    }

    @Test
    void no_header_or_an_empty_user_means_the_default_user() {
        assertThat(ConnectDispatch.basicAuthUser(null)).isEmpty();
        assertThat(ConnectDispatch.basicAuthUser("Basic Og==")).isEmpty();
    }

    @Test
    void other_schemes_and_bad_base64_are_unauthenticated() {
        assertThatThrownBy(() -> ConnectDispatch.basicAuthUser("Bearer abc"))
                .isInstanceOfSatisfying(
                        RpcException.class, e -> assertThat(e.code()).isEqualTo(ConnectCode.UNAUTHENTICATED));
        assertThatThrownBy(() -> ConnectDispatch.basicAuthUser("Basic !!!"))
                .isInstanceOfSatisfying(
                        RpcException.class, e -> assertThat(e.code()).isEqualTo(ConnectCode.UNAUTHENTICATED));
    }

    @Test
    void procedures_must_be_named_package_service_slash_method() {
        ConnectRouter router = new ConnectRouter();
        assertThatThrownBy(() -> router.unary(
                        "NoSlash",
                        io.agentenv.envd.protocol.process.ListRequest.getDefaultInstance(),
                        (request, call) -> request))
                .isInstanceOf(IllegalArgumentException.class);
        router.unary(
                "process.Process/List",
                io.agentenv.envd.protocol.process.ListRequest.getDefaultInstance(),
                (request, call) -> request);
        assertThat(router.find("/process.Process/List")).isPresent();
        assertThat(router.find("/process.Process/Nope")).isEmpty();
        assertThatThrownBy(() -> router.unary(
                        "process.Process/List",
                        io.agentenv.envd.protocol.process.ListRequest.getDefaultInstance(),
                        (request, call) -> request))
                .isInstanceOf(IllegalStateException.class);
    }
}
