package io.agentenv.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentenv.sdk.commands.PtyOptions;
import io.agentenv.sdk.commands.PtySize;
import io.agentenv.sdk.commands.RunOptions;
import io.agentenv.sdk.files.WatchOptions;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The options refuse what E2B's SDKs refuse, before any request. */
class OptionsTest {

    @Test
    void createOptionsDefaultToBaseAndLeaveTheRestToTheServer() {
        CreateOptions o = CreateOptions.defaults();
        assertThat(o.template()).isEqualTo("base");
        assertThat(o.timeout()).isEmpty();
        assertThat(o.lifecycle()).isEmpty();
        assertThat(o.metadata()).isEmpty();
    }

    @Test
    void createOptionsAreImmutableCopies() {
        CreateOptions.Builder b = CreateOptions.builder().metadata("a", "1");
        CreateOptions first = b.build();
        b.metadata("b", "2");
        assertThat(first.metadata()).containsOnlyKeys("a");
        assertThatThrownBy(() -> first.metadata().put("c", "3")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void timeoutsUnderOneSecondAndEmptyTemplatesAreRefused() {
        assertThatThrownBy(() ->
                        CreateOptions.builder().timeout(Duration.ofMillis(500)).build())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("at least 1 s");
        assertThatThrownBy(() -> CreateOptions.builder().template(" ").build())
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> ForkOptions.of(1, Duration.ZERO)).isInstanceOf(InvalidArgumentException.class);
    }

    @Test
    void lifecycleCombinationsFollowE2bRules() {
        assertThat(Lifecycle.pause(false).keepMemory()).contains(false);
        assertThat(Lifecycle.pause().withAutoResume(true).autoResume()).contains(true);
        assertThatThrownBy(() -> new Lifecycle(OnTimeout.KILL, Optional.of(true), Optional.empty()))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("keepMemory");
        assertThatThrownBy(() -> Lifecycle.kill().withAutoResume(true))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("autoResume");
        assertThatThrownBy(() -> Lifecycle.pause(false).withAutoResume(true))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("filesystem-only");
        assertThat(Lifecycle.kill().withAutoResume(false).autoResume()).contains(false);
    }

    @Test
    void pagingAndCountsHaveTheirRanges() {
        assertThatThrownBy(() -> ListOptions.builder().limit(0).build()).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> ListOptions.builder().limit(101).build()).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> SnapshotListOptions.all().withLimit(0)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> ForkOptions.of(0)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> ForkOptions.of(101)).isInstanceOf(InvalidArgumentException.class);
        assertThat(ListOptions.builder()
                        .states(SandboxState.PAUSED)
                        .limit(5)
                        .build()
                        .states())
                .containsExactly(SandboxState.PAUSED);
    }

    @Test
    void commandAndTerminalOptionsCheckTheirValues() {
        RunOptions defaults = RunOptions.defaults();
        assertThat(defaults.timeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(defaults.stdin()).isFalse();
        assertThat(RunOptions.builder().timeout(Duration.ZERO).build().timeout())
                .isZero();
        assertThatThrownBy(() ->
                        RunOptions.builder().timeout(Duration.ofSeconds(-1)).build())
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> new PtySize(0, 24)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> PtyOptions.builder(80, 70000)).isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() ->
                        WatchOptions.builder().timeout(Duration.ofMillis(-1)).build())
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> UrlOptions.defaults().withExpiration(Duration.ZERO))
                .isInstanceOf(InvalidArgumentException.class);
    }

    @Test
    void secondsAreRoundedUpAsTheSdksSendThem() {
        assertThat(Sandbox.seconds(Duration.ofMillis(1500))).isEqualTo(2);
        assertThat(Sandbox.seconds(Duration.ofSeconds(300))).isEqualTo(300);
    }
}
