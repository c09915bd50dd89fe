package dev.taskline.service;

/**
 * Every operation a caller can ask of a node, one service a resource; the HTTP API calls nothing
 * else.
 */
public record Services(
        TaskService tasks,
        FlowService flows,
        NodeService node,
        ScheduleService schedules,
        KeyService keys,
        WorkService work,
        DurableService durable) {}
