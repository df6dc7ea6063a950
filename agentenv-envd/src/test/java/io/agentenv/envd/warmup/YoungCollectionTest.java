package io.agentenv.envd.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.ref.WeakReference;
import java.time.Duration;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class YoungCollectionTest {
    @Test
    void it_returns_once_a_collection_has_cleared_what_was_only_weakly_held_before() {
        WeakReference<Object> before = new WeakReference<>(new Object());

        boolean ran = YoungCollection.runNext(1L << 30, Duration.ofSeconds(30));

        assertThat(ran).isTrue();
        assertThat(before.refersTo(null))
                .as("a young object of before the call was collected")
                .isTrue();
    }

    @Test
    void it_gives_up_at_its_allocation_cap() {
        assertThat(YoungCollection.runNext(0, Duration.ofSeconds(30))).isFalse();
    }
}
