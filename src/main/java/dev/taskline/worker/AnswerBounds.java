package dev.taskline.worker;

import dev.taskline.config.TasklineConfig;

/**
 * The sizes an attempt's reads and writes are held to.
 *
 * @param maxParentBytes what a flow task's parents' results may weigh inline (flows.maxParentBytes);
 *                       past it the handler pages through them
 * @param maxClaimBytes  what one claim's answer may weigh (http.maxClaimBytes)
 * @param maxResultBytes what a result may weigh (http.bodyLimitBytes): what no request could bring
 *                       is not kept from a handler either
 */
public record AnswerBounds(long maxParentBytes, long maxClaimBytes, long maxResultBytes) {

    public static AnswerBounds of(TasklineConfig config) {
        return new AnswerBounds(
                config.flows().maxParentBytes(),
                config.http().maxClaimBytes(),
                config.http().bodyLimitBytes());
    }
}
