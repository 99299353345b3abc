-- Health of an Argo Rollouts Rollout.
--
-- Order of evaluation:
--   1. the controller must have observed the current spec (and, with
--      spec.workloadRef, the current referenced workload);
--   2. Rollouts v1.0+ publish status.phase/status.message: surface them,
--      mapping the "Paused" phase to Suspended;
--   3. older controllers: derive health from conditions, pause state,
--      replica counts and the strategy-specific selectors.

local function isNumeric(v)
  return type(v) == "number" or (type(v) == "string" and string.match(v, "^%d+$") ~= nil)
end

local function count(v)
  local n = tonumber(v)
  if n == nil then
    return 0
  end
  return n
end

local function fmt(n)
  return string.format("%d", n)
end

local function nonEmpty(s)
  return type(s) == "string" and s ~= ""
end

local function result(status, message)
  return {status = status, message = message}
end

local meta = obj.metadata or {}
local spec = obj.spec or {}
local status = obj.status
local notObserved = "Waiting for rollout spec update to be observed"

if status == nil or status.observedGeneration == nil then
  return result("Progressing", notObserved)
end

-- Controllers before v1.0 stored a pod-template hash in observedGeneration;
-- only a numeric value can be compared with metadata.generation.
if isNumeric(status.observedGeneration) and meta.generation ~= nil
    and tonumber(status.observedGeneration) ~= tonumber(meta.generation) then
  return result("Progressing", notObserved)
end

if spec.workloadRef ~= nil and meta.annotations ~= nil then
  local wanted = meta.annotations["rollout.argoproj.io/workload-generation"]
  if wanted ~= nil and tostring(wanted) ~= tostring(status.workloadObservedGeneration) then
    return result("Progressing", notObserved)
  end
end

-- Rollouts v1.0+ compute the phase themselves.
if nonEmpty(status.phase) then
  local phase = status.phase
  local message = status.message
  if phase == "Paused" then
    if not nonEmpty(message) then
      message = "Rollout is paused"
    end
    return result("Suspended", message)
  end
  if phase == "Healthy" or phase == "Progressing" or phase == "Degraded" then
    if not nonEmpty(message) then
      message = "Rollout is " .. string.lower(phase)
    end
    return result(phase, message)
  end
  return result("Unknown", "Unknown rollout phase: " .. phase)
end

-- Legacy controllers: no phase in status.
if type(status.conditions) == "table" then
  for _, c in ipairs(status.conditions) do
    if c.type == "InvalidSpec" then
      return result("Degraded", c.message or "Rollout spec is invalid")
    end
    if c.type == "Progressing" and (c.reason == "RolloutAborted" or c.reason == "ProgressDeadlineExceeded") then
      return result("Degraded", c.message or c.reason)
    end
  end
end

if spec.paused == true or (type(status.pauseConditions) == "table" and #status.pauseConditions > 0) then
  return result("Suspended", "Rollout is paused")
end

if status.currentPodHash == nil then
  return result("Progressing", "Waiting for rollout to finish: status has not been reconciled")
end

local desired = 1
if spec.replicas ~= nil then
  desired = count(spec.replicas)
end
local replicas = count(status.replicas)
local updated = count(status.updatedReplicas)
local available = count(status.availableReplicas)

if updated < desired then
  return result("Progressing", "Waiting for rollout to finish: " .. fmt(updated) .. " of " .. fmt(desired) .. " replicas updated")
end
if available < updated then
  return result("Progressing", "Waiting for rollout to finish: " .. fmt(available) .. " of " .. fmt(updated) .. " updated replicas available")
end

-- status.canary.stableRS was replaced by status.stableRS in v0.8.
local stableRS = status.stableRS
if stableRS == nil and status.canary ~= nil then
  stableRS = status.canary.stableRS
end

local strategy = spec.strategy or {}
if strategy.blueGreen ~= nil then
  if status.blueGreen == nil or status.blueGreen.activeSelector ~= status.currentPodHash then
    return result("Progressing", "Waiting for rollout to finish: active service cutover pending")
  end
  if nonEmpty(stableRS) and stableRS ~= status.currentPodHash then
    return result("Progressing", "Waiting for rollout to finish: analysis has not completed")
  end
elseif strategy.canary ~= nil then
  if replicas > updated then
    return result("Progressing", "Waiting for rollout to finish: " .. fmt(replicas - updated) .. " old replicas pending termination")
  end
  if stableRS ~= status.currentPodHash then
    return result("Progressing", "Waiting for rollout to finish steps")
  end
end

return result("Healthy", "Rollout is healthy")
