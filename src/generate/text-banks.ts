// The generator's word lists: company names, places, images, and each language's templates and vocabulary.
import { cumulativeOf, type Rng } from './random-source.js'

// Headlines stay neutral business news: the companies are real, the events are not.

export const REAL_COMPANIES = [
  'Société Générale', 'Nestlé', 'Siemens', 'Glencore', 'Telefónica', 'L\'Oréal', 'Danone', 'Carrefour', 'Repsol',
  'Iberdrola', 'Inditex', 'Volkswagen', 'BASF', 'Bayer', 'TotalEnergies', 'Rio Tinto', 'Vale', 'Shell', 'Unilever',
  'Adidas', 'H&M', 'Ferrero', 'Aldi Süd', 'Crédit Agricole', 'BNP Paribas', 'Banco Santander', 'BBVA', 'Engie',
  'Électricité de France', 'Bolloré', 'Anglo American', 'Petrobras', 'Cemex', 'Grupo México', 'Südzucker', 'Nokia',
  'Ericsson', 'Equinor', 'Maersk', 'Heineken', 'Holcim', 'Stellantis', 'Thyssenkrupp', 'Mondelēz International',
  'Ørsted', 'Škoda Auto', 'Grupo Bimbo', 'Codelco', 'Ecopetrol', 'Lindt & Sprüngli', 'Zürich Insurance', 'Migros'
]
export const NAME_STEMS = [
  'Altiplano', 'Nordhavn', 'Vértice', 'Boréal', 'Sierra Dorada', 'Keystone', 'Lumière', 'Río Claro', 'Baltica',
  'Meridian', 'Østfold', 'Sahel', 'Cordillera', 'Pacífico', 'Rhône', 'Andina', 'Atlas', 'Kivu', 'Mekong',
  'Tierra Verde', 'Helvetia', 'Zambeze', 'Carpathia', 'Orinoco', 'Bengal', 'Fjordlys', 'Savanna', 'Cascadia',
  'Danubia', 'Patagonia'
]
export const NAME_TRADES = [
  'Mining', 'Textiles', 'Energía', 'Foods', 'Logistics', 'Holdings', 'Agro', 'Pharma', 'Telecom', 'Construction',
  'Minerals', 'Retail', 'Bank', 'Shipping', 'Solar', 'Chemicals', 'Apparel', 'Cacao', 'Metals', 'Paper'
]
export const NAME_FORMS = ['Group', 'International', 'S.A.', 'GmbH', 'Ltd', 'SAS', 'AG', 'plc']

export const PLACES = [
  'São Paulo', 'Bogotá', 'Medellín', 'Zürich', 'Montréal', 'Córdoba', 'Düsseldorf', 'Genève', 'Yaoundé',
  'Lomé', 'Asunción', 'Kraków', 'Malmö', 'Antofagasta', 'Cajamarca', 'Ciudad Juárez', 'Dhaka', 'Jakarta', 'Lagos',
  'Nairobi', 'Johannesburg', 'Ho Chi Minh City', 'Chennai', 'Shenzhen', 'Lima', 'Abidjan', 'Lubumbashi', 'Temuco',
  'Potosí', 'Mérida', 'Valparaíso', 'Tromsø', 'Reykjavík', 'Oaxaca', 'Cusco', 'Iquique', 'Mombasa', 'Accra',
  'Casablanca'
]
export const ANALYSTS = [
  'Morgan Stanley', 'BBVA Research', 'Berenberg', 'Jefferies', 'UBS', 'Bankinter', 'Oddo BHF', 'Natixis'
]
export const IMAGE_SUBJECTS = [
  'factory-floor', 'solar-panels', 'open-pit-mine', 'port-cranes', 'cocoa-farm', 'office-tower', 'garment-workers',
  'wind-farm', 'copper-cathodes', 'warehouse', 'oil-refinery', 'river-community', 'lithium-brine-ponds',
  'shareholder-meeting', 'delivery-riders', 'data-centre', 'palm-oil-plantation', 'press-conference'
]
export const IMAGE_SIZES: ReadonlyArray<readonly [number, number]> = [
  [800, 450], [1200, 675], [1024, 768], [800, 600], [1200, 800], [600, 600], [640, 960], [1600, 900], [320, 180]
]
export const INTERNAL_NOTES = [
  'Imported from the legacy CMS; check formatting.', 'Image credit to be confirmed before republishing.',
  'Merged with a duplicate entry.', 'Abstract shortened by the editor.'
]

export interface TextBank {
  readonly language: string
  readonly section: string
  readonly decimal: string
  readonly thousands: string
  readonly quotes: ReadonlyArray<readonly [string, string]>
  readonly titles: {
    readonly company: readonly string[], readonly pair: readonly string[], readonly none: readonly string[]
  }
  /** Story themes in the same order in every language, so a theme's refs agree across languages. */
  readonly themes?: readonly string[]
  readonly storyTitles?: readonly string[]
  readonly sentences: { readonly company: readonly string[], readonly none: readonly string[] }
  /** First-person lines for abstracts that quote a company statement. */
  readonly statements: readonly string[]
  readonly vocab: Readonly<Record<string, readonly string[]>>
  readonly money: (rng: Rng) => string
  /** Contractions the templates cannot know about (de + les → des). */
  readonly tidy?: (text: string) => string
}

const amount = (rng: Rng): { millions: number, billions: string, big: boolean } => ({
  millions: rng.int(5, 95) * 10,
  billions: (rng.int(11, 125) / 10).toFixed(1).replace(/\.0$/, ''),
  big: rng.chance(0.3)
})

export const BANKS = {
  en: {
    language: 'English',
    section: 'latest-news',
    decimal: '.',
    thousands: ',',
    quotes: [['“', '”'], ['"', '"']],
    titles: {
      company: [
        '{c} reports {resultsAdj} {period} results {resultsWhy}',
        '{c} to invest {money} in new {facility} in {place}',
        '{c} publishes {lastYear} sustainability report, sets new targets on {topic}',
        'Investors press {c} for more detail on {topic}',
        '{c} responds to questions about {topic} in {place}',
        'Unions and {c} reach agreement on {labour} at {place} site',
        '{c} appoints new {role} amid review of {topic}',
        '{c} signs {contract} to supply {product} in {place}',
        '{c} outlines plan to cut {metricPlan} by {pctInt}% by {targetYear}',
        'Shareholders back resolution asking {c} to report on {topic}',
        '{c} opens consultation with communities near {place} project'
      ],
      pair: [
        '{c} and {c2} announce partnership on {topic}',
        '{c} agrees to buy stake in {c2} unit for {money}',
        'Suppliers to {c} and {c2} sign pledge on {labour}'
      ],
      none: [
        'Report examines {topic} across the {sector} sector',
        'Regulators in {place} open consultation on {topic}',
        'New law in {place} requires companies to disclose {disclosure}',
        '{sector} companies in {place} face rising pressure over {topic}',
        'Study finds uneven progress on {topic} among {sector} firms'
      ]
    },
    themes: [
      'Transition minerals tracker', 'Garment workers & living wages', 'Corporate due diligence in Europe',
      'Just transition in the energy sector', 'Technology & data privacy', 'Cocoa supply chains',
      'Renewable energy & indigenous peoples’ rights', 'Migrant workers in the Gulf', 'Lithium in the Andes',
      'Climate litigation against companies'
    ],
    storyTitles: ['{theme}: {storySub}', '{theme}: {monthName} {year} update'],
    sentences: {
      company: [
        '{c} said on {weekday} that it would {action}, a step it described as central to its strategy to {targetYear}.',
        'In a statement to {source}, a spokesperson for {c} said the company had {pastAction} and would publish an update in {when}.',
        'According to {source}, the plan covers {num} sites in {place} and {place2} and is expected to affect about {bigNum} employees.',
        'Trade unions in {place} welcomed the announcement but asked for more detail on {topic}.',
        'Analysts at {analyst} described the figures as {assessment}, pointing to {factor}.',
        'Revenue rose {pct}% to {money}, while the operating margin moved to {pct2}%.',
        '{c} said it had shared its response with the researchers and remained open to dialogue with affected communities.',
        'The company expects the new {facility} in {place} to be fully operational by {when}.',
        'Investors representing {money} in assets have asked {c} to publish {disclosure}.',
        'Local organisations in {place} said consultation had so far been limited and called for {recommendation}.'
      ],
      none: [
        'The report, based on interviews with {num} workers, managers and suppliers, recommends {recommendation}.',
        'Researchers reviewed public disclosures from {num} companies operating in {place} and {place2}.',
        'Officials in {place} said the rules would take effect in {when} after a period of consultation.',
        'Industry groups said they supported the aim of the proposal but warned about {factor}.',
        'Fewer than {pctInt}% of the companies assessed had published {disclosure}.',
        'Civil society groups in {place} said the findings matched what they had documented since {lastYear}.'
      ]
    },
    statements: [
      'We take these concerns seriously and have asked our suppliers in {place} for a full account of the situation.',
      'We are committed to respecting human rights across our operations and expect the same of our business partners.',
      'Our {lastYear} report sets out the progress we have made on {topic} and the areas where we must do more.',
      'We have engaged an independent auditor and will share the findings with the affected workers and their representatives.',
      'This investment reflects our long-term commitment to {place} and to a fair energy transition.',
      'We regret any impact on the communities concerned and remain open to dialogue.'
    ],
    vocab: {
      topic: [
        'supply chain due diligence', 'living wages', 'water use', 'carbon emissions', 'worker safety',
        'indigenous land rights', 'lithium mining', 'the energy transition', 'data privacy', 'packaging waste',
        'freedom of association', 'cocoa sourcing', 'recruitment fees for migrant workers',
        'deforestation-free sourcing'
      ],
      sector: [
        'mining', 'garment', 'food and beverage', 'energy', 'technology', 'banking', 'construction', 'cocoa',
        'automotive'
      ],
      facility: [
        'factory', 'solar plant', 'mine', 'refinery', 'desalination plant', 'regional headquarters',
        'distribution centre', 'battery plant'
      ],
      role: [
        'chief financial officer', 'chief executive', 'head of sustainability', 'chief procurement officer',
        'board chair'
      ],
      resultsAdj: ['strong', 'better-than-expected', 'weaker', 'record', 'mixed'],
      period: ['third-quarter', 'first-half', 'full-year', 'second-quarter'],
      resultsWhy: [
        'as sales rise in Latin America', 'as copper prices recover', 'despite weak demand in Europe', 'on cost cuts',
        'as online orders climb'
      ],
      labour: ['wages', 'working hours', 'safety measures', 'temporary contracts', 'union recognition'],
      contract: ['ten-year contract', 'multi-year agreement', 'framework deal'],
      product: [
        'wind turbines', 'green hydrogen', 'copper concentrate', 'rail equipment', 'cloud services', 'fertiliser'
      ],
      metricPlan: ['emissions', 'water consumption', 'plastic waste', 'coal use'],
      disclosure: [
        'supplier lists', 'scope 3 emissions data', 'human rights impact assessments', 'supply chain wage data'
      ],
      action: [
        'tighten audits of its suppliers', 'close two older plants', 'expand its renewable power purchases',
        'revise its human rights policy', 'hire {bigNum} people', 'move part of its production to {place2}'
      ],
      pastAction: [
        'commissioned an independent audit', 'met its main suppliers', 'temporarily suspended shipments',
        'reviewed its climate commitments', 'set up a grievance hotline for workers'
      ],
      assessment: ['solid', 'disappointing', 'better than expected', 'cautious'],
      factor: [
        'rising energy costs', 'weak demand in Europe', 'regulatory uncertainty', 'currency swings',
        'higher financing costs'
      ],
      recommendation: [
        'greater transparency about suppliers', 'accessible grievance mechanisms',
        'meaningful participation of affected communities', 'regular independent audits'
      ],
      when: ['early {targetYear}', 'mid-{targetYear}', 'late {targetYear}', 'the first half of {targetYear}'],
      weekday: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'],
      source: [
        'Reuters', 'the Financial Times', 'Bloomberg', 'the Guardian', 'Le Monde', 'El País', 'Handelsblatt',
        'Les Échos'
      ],
      storySub: [
        'company responses and latest developments', 'what we know so far', 'timeline of key events',
        'updates from the ground'
      ],
      monthName: [
        'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November',
        'December'
      ]
    },
    money: (rng) => {
      const a = amount(rng)
      const cur = rng.pick(['€', '$', '£'])
      return a.big ? `${cur}${a.billions}bn` : `${cur}${a.millions}m`
    }
  },
  es: {
    language: 'Español',
    section: 'últimas-noticias',
    decimal: ',',
    thousands: '.',
    quotes: [['«', '»'], ['“', '”'], ['"', '"']],
    titles: {
      company: [
        '{c} presenta resultados {resultsAdj} del {period} gracias a {driver}',
        '{c} invertirá {money} en una nueva {facility} en {place}',
        '{c} publica su informe de sostenibilidad {lastYear} con nuevos objetivos sobre {topic}',
        'Inversores piden a {c} más información sobre {topic}',
        '{c} responde a preguntas sobre {topic} en {place}',
        'Sindicatos y {c} alcanzan un acuerdo sobre {labour} en la planta de {place}',
        '{c} nombra a un nuevo {role} en plena revisión de {topic}',
        '{c} abre una consulta con las comunidades cercanas al proyecto de {place}',
        '{c} se compromete a reducir {metricPlan} un {pctInt} % antes de {targetYear}'
      ],
      pair: [
        '{c} y {c2} anuncian una alianza sobre {topic}',
        '{c} comprará una participación en una filial de {c2} por {money}'
      ],
      none: [
        'Un informe analiza {topic} en el sector {sector}',
        'Las autoridades de {place} abren una consulta sobre {topic}',
        'Una nueva ley en {place} obliga a las empresas a divulgar {disclosure}',
        'Un estudio revela avances desiguales en {topic} entre las empresas del sector {sector}'
      ]
    },
    themes: [
      'Monitor de minerales de transición', 'Trabajadoras textiles y salarios dignos',
      'Diligencia debida empresarial en Europa', 'Transición justa en el sector energético',
      'Tecnología y privacidad de datos', 'Cadenas de suministro del cacao',
      'Energías renovables y derechos de los pueblos indígenas', 'Trabajadores migrantes en el Golfo',
      'El litio en los Andes', 'Litigios climáticos contra empresas'
    ],
    storyTitles: ['{theme}: {storySub}', '{theme}: actualización de {monthName} de {year}'],
    sentences: {
      company: [
        '{c} anunció el {weekday} que {action}, una decisión que enmarca en su estrategia hasta {targetYear}.',
        'Según {source}, el plan abarca {num} centros en {place} y {place2} y afectará a unos {bigNum} empleados.',
        'Un portavoz de {c} explicó a {source} que la compañía {pastAction} y que publicará una actualización {when}.',
        'Los sindicatos de {place} celebraron el anuncio, aunque pidieron más detalles sobre {topic}.',
        'Los analistas de {analyst} calificaron las cifras de {assessment} y señalaron {factor}.',
        'La facturación creció un {pct} % hasta {money}, mientras que el margen operativo se situó en el {pct2} %.',
        '{c} aseguró que había compartido su respuesta con los investigadores y que sigue abierta al diálogo con las comunidades afectadas.',
        'Organizaciones locales de {place} afirmaron que las consultas han sido limitadas y reclamaron {recommendation}.'
      ],
      none: [
        'El informe, basado en entrevistas con {num} trabajadores, directivos y proveedores, recomienda {recommendation}.',
        'Los investigadores revisaron la información publicada por {num} empresas con actividad en {place} y {place2}.',
        'Menos del {pctInt} % de las empresas evaluadas había publicado {disclosure}.',
        'Las patronales apoyaron el objetivo de la propuesta, pero advirtieron sobre {factor}.',
        'Las autoridades de {place} indicaron que las nuevas normas entrarán en vigor {when}.',
        'Organizaciones de la sociedad civil de {place} señalaron que las conclusiones coinciden con lo documentado desde {lastYear}.'
      ]
    },
    statements: [
      'Nos tomamos muy en serio estas preocupaciones y hemos pedido a nuestros proveedores en {place} una explicación completa.',
      'Estamos comprometidos con el respeto de los derechos humanos en todas nuestras operaciones y esperamos lo mismo de nuestros socios.',
      'Nuestro informe de {lastYear} recoge los avances en {topic} y los ámbitos en los que debemos mejorar.',
      'Hemos encargado una auditoría independiente y compartiremos los resultados con los trabajadores afectados y sus representantes.',
      'Lamentamos cualquier impacto en las comunidades afectadas y seguimos abiertos al diálogo.'
    ],
    vocab: {
      topic: [
        'la diligencia debida en la cadena de suministro', 'los salarios dignos', 'el uso del agua',
        'las emisiones de carbono', 'la seguridad de los trabajadores', 'los derechos de los pueblos indígenas',
        'la minería de litio', 'la transición energética', 'la privacidad de los datos', 'los residuos de envases',
        'la libertad sindical', 'el trabajo de los pequeños agricultores'
      ],
      sector: [
        'minero', 'textil', 'agroalimentario', 'energético', 'tecnológico', 'financiero', 'pesquero', 'del cacao',
        'de la construcción'
      ],
      facility: [
        'planta', 'fábrica', 'central solar', 'mina', 'refinería', 'planta desalinizadora', 'sede regional',
        'terminal portuaria'
      ],
      role: [
        'director financiero', 'consejero delegado', 'responsable de sostenibilidad', 'director de compras',
        'presidente del consejo'
      ],
      resultsAdj: ['sólidos', 'mejores de lo esperado', 'por debajo de lo previsto', 'récord', 'mixtos'],
      period: ['tercer trimestre', 'primer semestre', 'ejercicio', 'segundo trimestre'],
      driver: [
        'la demanda en Latinoamérica', 'la subida del precio del cobre', 'el recorte de costes',
        'la expansión en España', 'las ventas en línea'
      ],
      labour: [
        'los salarios', 'la jornada laboral', 'las medidas de seguridad', 'los contratos temporales',
        'el derecho de asociación'
      ],
      metricPlan: ['sus emisiones', 'el consumo de agua', 'los residuos plásticos', 'el uso de carbón'],
      disclosure: [
        'la lista de sus proveedores', 'sus emisiones de alcance 3', 'sus evaluaciones de impacto en derechos humanos',
        'los salarios pagados en su cadena de suministro'
      ],
      action: [
        'reforzará las auditorías a sus proveedores', 'cerrará dos plantas antiguas',
        'ampliará sus compras de energía renovable', 'revisará su política de derechos humanos',
        'contratará a {bigNum} personas'
      ],
      pastAction: [
        'ha encargado una auditoría independiente', 'ha reunido a sus principales proveedores',
        'ha suspendido temporalmente los envíos', 'ha revisado sus compromisos climáticos'
      ],
      assessment: ['sólidas', 'decepcionantes', 'mejores de lo esperado', 'prudentes'],
      factor: [
        'el aumento de los costes energéticos', 'la debilidad de la demanda en Europa', 'la incertidumbre regulatoria',
        'la volatilidad del tipo de cambio'
      ],
      recommendation: [
        'una mayor transparencia sobre los proveedores', 'mecanismos de reclamación accesibles',
        'la participación de las comunidades afectadas', 'auditorías independientes periódicas'
      ],
      when: [
        'a principios de {targetYear}', 'a mediados de {targetYear}', 'a finales de {targetYear}',
        'en el primer semestre de {targetYear}'
      ],
      weekday: ['lunes', 'martes', 'miércoles', 'jueves', 'viernes'],
      source: ['El País', 'Expansión', 'Cinco Días', 'Reuters', 'la agencia EFE', 'El Espectador', 'La Tercera'],
      storySub: [
        'respuestas de las empresas y últimas novedades', 'lo que sabemos hasta ahora', 'cronología de los hechos'
      ],
      monthName: [
        'enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre',
        'diciembre'
      ]
    },
    money: (rng) => {
      const a = amount(rng)
      const cur = rng.pick(['euros', 'dólares'])
      return a.big ? `${a.billions.replace('.', ',')} mil millones de ${cur}` : `${a.millions} millones de ${cur}`
    },
    tidy: (text) => text.replace(/\bde el\b/g, 'del').replace(/\ba el\b/g, 'al')
  },
  fr: {
    language: 'Français',
    section: 'dernières-actualités',
    decimal: ',',
    // French typography groups thousands with a narrow no-break space.
    thousands: '\u202f',
    quotes: [['« ', ' »'], ['“', '”']],
    titles: {
      company: [
        '{c} publie des résultats {resultsAdj} pour le {period}',
        '{c} va investir {money} dans une nouvelle {facility} à {place}',
        '{c} répond aux questions sur {topic} à {place}',
        'Des investisseurs interpellent {c} sur {topic}',
        'Syndicats et {c} parviennent à un accord sur {labour} sur le site de {place}',
        '{c} publie son rapport de durabilité {lastYear} et fixe de nouveaux objectifs sur {topic}',
        '{c} nomme un nouveau {role} en pleine révision de {topic}',
        '{c} s’engage à réduire {metricPlan} de {pctInt} % d’ici {targetYear}',
        '{c} répond aux critiques sur {topic}'
      ],
      pair: [
        '{c} et {c2} annoncent un partenariat sur {topic}',
        '{c} va acquérir une participation dans une filiale de {c2} pour {money}'
      ],
      none: [
        'Un rapport examine {topic} dans le secteur {sector}',
        'Les autorités de {place} lancent une consultation sur {topic}',
        'Une nouvelle loi à {place} oblige les entreprises à publier {disclosure}',
        'Une étude constate des progrès inégaux sur {topic} dans le secteur {sector}'
      ]
    },
    themes: [
      'Observatoire des minerais de la transition', 'Ouvrières du textile et salaires décents',
      'Devoir de vigilance en Europe', 'Transition juste dans le secteur de l’énergie',
      'Technologie et protection des données', 'Filières du cacao',
      'Énergies renouvelables et droits des peuples autochtones', 'Travailleurs migrants dans le Golfe',
      'Le lithium dans les Andes', 'Contentieux climatiques contre les entreprises'
    ],
    storyTitles: ['{theme} : {storySub}', '{theme} : point d’étape de {monthName} {year}'],
    sentences: {
      company: [
        '{c} a annoncé {weekday} qu’elle allait {action}, une décision présentée comme centrale dans sa stratégie à l’horizon {targetYear}.',
        'Selon {source}, le plan concerne {num} sites à {place} et à {place2} et touchera environ {bigNum} salariés.',
        'Un porte-parole de {c} a indiqué à {source} que le groupe {pastAction} et qu’il publiera un point d’étape {when}.',
        'Les syndicats de {place} ont salué l’annonce tout en réclamant des précisions sur {topic}.',
        'Les analystes de {analyst} jugent ces chiffres {assessment}, en soulignant {factor}.',
        'Le chiffre d’affaires a progressé de {pct} % à {money}, tandis que la marge opérationnelle s’établit à {pct2} %.',
        '{c} affirme avoir transmis sa réponse aux chercheurs et rester ouverte au dialogue avec les communautés concernées.',
        'Des associations locales de {place} estiment que la concertation reste limitée et demandent {recommendation}.'
      ],
      none: [
        'Le rapport, fondé sur des entretiens avec {num} travailleurs, cadres et fournisseurs, recommande {recommendation}.',
        'Les chercheurs ont examiné les informations publiées par {num} entreprises présentes à {place} et à {place2}.',
        'Moins de {pctInt} % des entreprises évaluées avaient publié {disclosure}.',
        'Les organisations patronales soutiennent l’objectif du texte mais mettent en garde contre {factor}.',
        'Les autorités de {place} indiquent que les nouvelles règles entreront en vigueur {when}.',
        'Des organisations de la société civile de {place} notent que ces conclusions rejoignent ce qu’elles documentent depuis {lastYear}.'
      ]
    },
    statements: [
      'Nous prenons ces préoccupations très au sérieux et avons demandé à nos fournisseurs à {place} un compte rendu complet.',
      'Nous nous engageons à respecter les droits humains dans l’ensemble de nos activités et attendons la même chose de nos partenaires.',
      'Notre rapport {lastYear} présente nos progrès sur {topic} et les domaines où nous devons faire davantage.',
      'Nous avons mandaté un auditeur indépendant et partagerons ses conclusions avec les travailleurs concernés et leurs représentants.',
      'Nous regrettons tout impact sur les communautés concernées et restons ouverts au dialogue.'
    ],
    vocab: {
      topic: [
        'le devoir de vigilance', 'les salaires décents', 'l’utilisation de l’eau', 'les émissions de carbone',
        'la sécurité des travailleurs', 'les droits des peuples autochtones', 'l’extraction du cobalt',
        'la transition énergétique', 'la protection des données', 'les déchets d’emballage',
        'la liberté syndicale', 'la chaîne d’approvisionnement du cacao'
      ],
      sector: [
        'minier', 'textile', 'agroalimentaire', 'énergétique', 'bancaire', 'numérique', 'de la construction',
        'du cacao'
      ],
      facility: [
        'usine', 'centrale solaire', 'mine', 'raffinerie', 'plateforme logistique', 'usine de dessalement',
        'filiale régionale'
      ],
      role: [
        'directeur financier', 'directeur général', 'responsable du développement durable', 'directeur des achats',
        'président du conseil'
      ],
      resultsAdj: ['solides', 'meilleurs que prévu', 'inférieurs aux attentes', 'record', 'mitigés'],
      period: ['troisième trimestre', 'premier semestre', 'exercice', 'deuxième trimestre'],
      labour: [
        'les salaires', 'le temps de travail', 'les mesures de sécurité', 'les contrats précaires',
        'le droit syndical'
      ],
      metricPlan: ['ses émissions', 'sa consommation d’eau', 'ses déchets plastiques', 'son recours au charbon'],
      disclosure: [
        'la liste de leurs fournisseurs', 'leurs émissions de scope 3',
        'leurs études d’impact sur les droits humains',
        'les salaires versés dans leur chaîne d’approvisionnement'
      ],
      action: [
        'renforcer les audits de ses fournisseurs', 'fermer deux sites vieillissants',
        'étendre ses achats d’électricité renouvelable', 'réviser sa politique en matière de droits humains',
        'recruter {bigNum} personnes'
      ],
      pastAction: [
        'a commandé un audit indépendant', 'a réuni ses principaux fournisseurs',
        'a suspendu temporairement les livraisons', 'a revu ses engagements climatiques'
      ],
      assessment: ['solides', 'décevants', 'meilleurs que prévu', 'prudents'],
      factor: [
        'la hausse des coûts de l’énergie', 'la faiblesse de la demande en Europe',
        'l’incertitude réglementaire', 'la volatilité des changes'
      ],
      recommendation: [
        'davantage de transparence sur les fournisseurs', 'des mécanismes de réclamation accessibles',
        'la participation des communautés concernées', 'des audits indépendants réguliers'
      ],
      when: ['début {targetYear}', 'mi-{targetYear}', 'fin {targetYear}', 'au premier semestre {targetYear}'],
      weekday: ['lundi', 'mardi', 'mercredi', 'jeudi', 'vendredi'],
      source: ['Le Monde', 'Les Échos', 'l’AFP', 'Reuters', 'Le Figaro', 'La Tribune', 'Jeune Afrique'],
      storySub: [
        'réponses des entreprises et derniers développements', 'ce que l’on sait', 'chronologie des faits'
      ],
      monthName: [
        'janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre',
        'décembre'
      ]
    },
    money: (rng) => {
      const a = amount(rng)
      const dollars = rng.chance(0.3)
      return a.big
        ? `${a.billions.replace('.', ',')} milliards ${dollars ? 'de dollars' : 'd’euros'}`
        : `${a.millions} millions ${dollars ? 'de dollars' : 'd’euros'}`
    },
    tidy: (text) => text
      .replace(/\bde les\b/g, 'des').replace(/\bde le\b/g, 'du')
      .replace(/\bà les\b/g, 'aux').replace(/\bà le\b/g, 'au')
      .replace(/\bde (?=[AEIOUÉÈÊÎÔ])/g, 'd’')
  },
  // de and pt appear only as the original language of untranslated items, so they carry no story themes.
  de: {
    language: 'Deutsch',
    section: 'neueste-nachrichten',
    decimal: ',',
    thousands: '.',
    quotes: [['„', '“'], ['"', '"']],
    titles: {
      company: [
        '{c} meldet {resultsAdj} Zahlen für das {period}',
        '{c} investiert {money} in neues {facility} in {place}',
        '{c} äußert sich zu Fragen zum Thema {topic}',
        'Gewerkschaften und {c} einigen sich über {labour} am Standort {place}',
        'Investoren fordern von {c} mehr Angaben zum Thema {topic}',
        '{c} veröffentlicht Nachhaltigkeitsbericht {lastYear}',
        '{c} will {metricPlan} bis {targetYear} um {pctInt} Prozent senken'
      ],
      pair: ['{c} und {c2} kündigen Partnerschaft zum Thema {topic} an'],
      none: [
        'Studie untersucht {topic} in der {sector}',
        'Behörden in {place} starten Konsultation zum Thema {topic}',
        'Neues Gesetz in {place} verpflichtet Unternehmen zur Offenlegung von {disclosure}'
      ]
    },
    sentences: {
      company: [
        '{c} kündigte am {weekday} an, {action}; der Schritt sei zentral für die Strategie bis {targetYear}.',
        'Laut {source} betrifft der Plan {num} Standorte in {place} und {place2} sowie rund {bigNum} Beschäftigte.',
        'Ein Sprecher von {c} sagte gegenüber {source}, das Unternehmen {pastAction} und werde {when} einen Zwischenbericht vorlegen.',
        'Gewerkschaften in {place} begrüßten die Ankündigung, forderten aber mehr Details zum Thema {topic}.',
        'Analysten von {analyst} bewerteten die Zahlen als {assessment} und verwiesen auf {factor}.',
        'Der Umsatz stieg um {pct} Prozent auf {money}, die operative Marge lag bei {pct2} Prozent.'
      ],
      none: [
        'Der Bericht stützt sich auf Interviews mit {num} Beschäftigten, Führungskräften und Zulieferern und empfiehlt {recommendation}.',
        'Weniger als {pctInt} Prozent der untersuchten Unternehmen haben {disclosure} veröffentlicht.',
        'Wirtschaftsverbände unterstützen das Ziel, warnen aber vor zusätzlicher Bürokratie.',
        'Die Behörden in {place} erklärten, die neuen Regeln würden {when} in Kraft treten.'
      ]
    },
    statements: [
      'Wir nehmen diese Bedenken sehr ernst und haben unsere Zulieferer in {place} um eine vollständige Darstellung gebeten.',
      'Wir bekennen uns zur Achtung der Menschenrechte in allen unseren Geschäftsbereichen und erwarten dies auch von unseren Partnern.',
      'Wir haben einen unabhängigen Prüfer beauftragt und werden die Ergebnisse mit den betroffenen Beschäftigten teilen.',
      'Wir bedauern jede Beeinträchtigung der betroffenen Gemeinden und bleiben gesprächsbereit.'
    ],
    vocab: {
      topic: [
        'Lieferkettensorgfalt', 'existenzsichernde Löhne', 'Wasserverbrauch', 'CO₂-Emissionen', 'Arbeitssicherheit',
        'Rechte indigener Völker', 'Lithiumabbau', 'Energiewende', 'Datenschutz', 'Verpackungsmüll',
        'Gewerkschaftsfreiheit'
      ],
      sector: [
        'Bergbaubranche', 'Textilbranche', 'Lebensmittelindustrie', 'Energiewirtschaft', 'Finanzbranche',
        'Kakaoindustrie'
      ],
      facility: ['Werk', 'Solarkraftwerk', 'Logistikzentrum', 'Forschungszentrum', 'Regionalbüro'],
      resultsAdj: ['starke', 'überraschend gute', 'schwächere', 'gemischte'],
      period: ['dritte Quartal', 'erste Halbjahr', 'Geschäftsjahr'],
      labour: ['Löhne', 'Arbeitszeiten', 'Sicherheitsmaßnahmen', 'befristete Verträge'],
      metricPlan: ['seine Emissionen', 'seinen Wasserverbrauch', 'seinen Plastikmüll'],
      disclosure: ['Lieferantenlisten', 'Scope-3-Emissionen', 'Lohndaten aus der Lieferkette'],
      action: [
        'die Prüfungen seiner Zulieferer zu verschärfen', 'zwei ältere Werke zu schließen',
        'mehr Ökostrom einzukaufen', 'seine Menschenrechtsrichtlinie zu überarbeiten',
        '{bigNum} neue Stellen zu schaffen'
      ],
      pastAction: [
        'habe eine unabhängige Prüfung in Auftrag gegeben', 'habe die wichtigsten Zulieferer an einen Tisch geholt',
        'habe Lieferungen vorübergehend ausgesetzt', 'habe seine Klimaziele überprüft'
      ],
      assessment: ['solide', 'enttäuschend', 'besser als erwartet', 'vorsichtig'],
      factor: [
        'steigende Energiekosten', 'die schwache Nachfrage in Europa', 'regulatorische Unsicherheit',
        'Wechselkursschwankungen'
      ],
      recommendation: [
        'mehr Transparenz über Zulieferer', 'zugängliche Beschwerdemechanismen',
        'regelmäßige unabhängige Prüfungen'
      ],
      when: ['Anfang {targetYear}', 'Mitte {targetYear}', 'Ende {targetYear}', 'im ersten Halbjahr {targetYear}'],
      weekday: ['Montag', 'Dienstag', 'Mittwoch', 'Donnerstag', 'Freitag'],
      source: ['dem Handelsblatt', 'der Süddeutschen Zeitung', 'der Nachrichtenagentur dpa', 'Reuters', 'der NZZ']
    },
    money: (rng) => {
      const a = amount(rng)
      return a.big ? `${a.billions.replace('.', ',')} Milliarden Euro` : `${a.millions} Millionen Euro`
    }
  },
  pt: {
    language: 'Português',
    section: 'últimas-notícias',
    decimal: ',',
    thousands: '.',
    quotes: [['“', '”'], ['"', '"']],
    titles: {
      company: [
        '{c} anuncia investimento de {money} em nova {facility} em {place}',
        '{c} divulga resultados {resultsAdj} no {period}',
        '{c} responde a perguntas sobre {topic}',
        'Sindicatos e {c} chegam a acordo sobre {labour} em {place}',
        '{c} publica relatório de sustentabilidade de {lastYear}'
      ],
      pair: ['{c} e {c2} anunciam parceria sobre {topic}'],
      none: ['Relatório analisa {topic} no setor {sector}', 'Autoridades de {place} abrem consulta sobre {topic}']
    },
    sentences: {
      company: [
        '{c} anunciou na {weekday} que vai {action}, uma decisão que considera central para sua estratégia até {targetYear}.',
        'Segundo {source}, o plano abrange {num} unidades em {place} e {place2} e deve afetar cerca de {bigNum} funcionários.',
        'Um porta-voz da {c} afirmou que a empresa {pastAction} e que divulgará uma atualização {when}.',
        'Sindicatos de {place} elogiaram o anúncio, mas pediram mais detalhes sobre {topic}.',
        'A receita cresceu {pct}% para {money}, enquanto a margem operacional ficou em {pct2}%.'
      ],
      none: [
        'O relatório, baseado em entrevistas com {num} trabalhadores, gestores e fornecedores, recomenda {recommendation}.',
        'Menos de {pctInt}% das empresas avaliadas haviam publicado {disclosure}.',
        'As autoridades de {place} disseram que as novas regras entram em vigor {when}.'
      ]
    },
    statements: [
      'Levamos essas preocupações muito a sério e pedimos aos nossos fornecedores em {place} um relato completo da situação.',
      'Estamos comprometidos com o respeito aos direitos humanos em todas as nossas operações e esperamos o mesmo dos nossos parceiros.',
      'Contratamos uma auditoria independente e vamos compartilhar os resultados com os trabalhadores afetados.',
      'Lamentamos qualquer impacto sobre as comunidades afetadas e seguimos abertos ao diálogo.'
    ],
    vocab: {
      topic: [
        'a devida diligência na cadeia de suprimentos', 'salários dignos', 'o uso da água',
        'as emissões de carbono', 'a segurança dos trabalhadores', 'os direitos dos povos indígenas',
        'a mineração de lítio', 'a transição energética', 'a proteção de dados', 'a liberdade sindical'
      ],
      sector: ['de mineração', 'têxtil', 'agroalimentar', 'de energia', 'financeiro', 'do cacau'],
      facility: ['fábrica', 'usina solar', 'mina', 'refinaria', 'unidade de dessalinização'],
      resultsAdj: ['sólidos', 'acima do esperado', 'abaixo das previsões', 'recordes'],
      period: ['terceiro trimestre', 'primeiro semestre', 'exercício'],
      labour: ['os salários', 'a jornada de trabalho', 'as medidas de segurança', 'os contratos temporários'],
      action: [
        'reforçar as auditorias de fornecedores', 'fechar duas fábricas antigas',
        'ampliar a compra de energia renovável', 'revisar sua política de direitos humanos',
        'contratar {bigNum} pessoas'
      ],
      pastAction: [
        'encomendou uma auditoria independente', 'reuniu seus principais fornecedores',
        'suspendeu temporariamente as entregas', 'revisou seus compromissos climáticos'
      ],
      recommendation: [
        'mais transparência sobre os fornecedores', 'mecanismos de reclamação acessíveis',
        'a participação das comunidades afetadas'
      ],
      disclosure: [
        'a lista de fornecedores', 'suas emissões de escopo 3', 'avaliações de impacto em direitos humanos'
      ],
      when: ['no início de {targetYear}', 'em meados de {targetYear}', 'no fim de {targetYear}'],
      weekday: ['segunda-feira', 'terça-feira', 'quarta-feira', 'quinta-feira', 'sexta-feira'],
      source: ['a Reuters', 'o Valor Econômico', 'a Folha de S.Paulo', 'a agência Lusa']
    },
    money: (rng) => {
      const a = amount(rng)
      return a.big ? `R$ ${a.billions.replace('.', ',')} bilhões` : `R$ ${a.millions} milhões`
    }
  }
} satisfies Record<string, TextBank>
const BANK_BY_CODE: Readonly<Record<string, TextBank | undefined>> = BANKS

// Which language an untranslated item was originally written in, by how often each shows up on the site.
const SOURCE_LANGUAGE_WEIGHTS: ReadonlyArray<readonly [string, number]> = [
  ['en', 6], ['es', 3], ['fr', 2.5], ['de', 1.5], ['pt', 1]
]

export function baseLanguage (code: string): string {
  return code.split('-')[0] ?? code
}

// Languages without a word list of their own are written in English.
export function bankFor (code: string): TextBank {
  return BANK_BY_CODE[code] ?? BANK_BY_CODE[baseLanguage(code)] ?? BANKS.en
}

export function sourceLanguageWeights (listing: string): { codes: string[], cumulative: Float64Array } {
  const own = baseLanguage(listing)
  const kept = SOURCE_LANGUAGE_WEIGHTS.filter(([code]) => code !== own)
  return { codes: kept.map(([code]) => code), cumulative: cumulativeOf(kept.map(([, w]) => w)) }
}

export function sectionFor (code: string): string {
  return BANK_BY_CODE[code]?.section ?? BANK_BY_CODE[baseLanguage(code)]?.section ?? 'latest-news'
}
