/** Nomad-native service discovery: the ServiceRegistration records and the catalog the services hooks write. */
export { ServiceRegistry, type ServiceCatalog, type ServiceChange, type ServiceChanges, type ServiceNamespaceList, type IndexSource } from './service-registry.ts';
export { makeAllocServiceId, workloadName, ALLOC_SERVICE_PREFIX, type ServiceRegistration, type ServiceRegistrationInput } from './service-registration.ts';
export { registrationsOf, serviceLookup, type WorkloadServices } from './registrations-of.ts';
